// The pure parts of remote MCP tools: the names the model sees (Anthropic's name rule, a
// deterministic hash suffix when a name must change), the grouped <capabilities> line, and the
// mapping of a tool result to content blocks.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { indexLines } from "../../agent/tools/capability-index";
import type { ToolDefinition } from "../../agent/tools/registry";
import { mcpToolName } from "../../core/mcp-names";
import { mcpResultOutput } from "../../services/mcp/results";

const ANTHROPIC_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("mcpToolName", () => {
  it("keeps a valid name as mcp__<server>__<tool>", async () => {
    expect(await mcpToolName("fx", "add")).toBe("mcp__fx__add");
    expect(await mcpToolName("everything", "get-tiny-image")).toBe("mcp__everything__get-tiny-image");
  });

  it("shortens long or foreign names deterministically, keeping different tools apart", async () => {
    const server = "a".repeat(24);
    const long1 = `read_${"x".repeat(80)}_one`;
    const long2 = `read_${"x".repeat(80)}_two`;
    const names = await Promise.all([
      mcpToolName(server, long1),
      mcpToolName(server, long2),
      mcpToolName("fx", "files/read"),
      mcpToolName("fx", "files.read"),
    ]);
    for (const n of names) expect(n).toMatch(ANTHROPIC_NAME);
    expect(new Set(names).size).toBe(4);
    expect(names[0]).toMatch(new RegExp(`^mcp__${server}__read_x+_[0-9a-f]{8}$`));
    expect(names[2]).toMatch(/^mcp__fx__files_read_[0-9a-f]{8}$/);
    expect(await mcpToolName(server, long1)).toBe(names[0]);
  });
});

describe("indexLines", () => {
  const tool = (name: string, group?: string): ToolDefinition<unknown> => ({
    name,
    shortName: name.split("__").pop(),
    description: name,
    capability: `${name}: does ${name}`,
    core: false,
    input: z.object({}),
    ...(group ? { indexGroup: group } : {}),
    run: async () => ({ content: "" }),
  });

  it("gives each group one line naming its count and its tools' verbs, and ungrouped tools a line each", () => {
    const verbs = ["get", "list", "create", "update", "delete", "search", "export"];
    const many = Array.from({ length: 80 }, (_, i) =>
      tool(`mcp__big__${verbs[i % verbs.length]}_thing${i}`, "mcp__big__* (MCP server)"),
    );
    const lines = indexLines([tool("http_weather"), ...many, tool("mcp__small__only", "mcp__small__* (MCP server)")]);
    expect(lines).toEqual([
      "http_weather: does http_weather (tool_activate first)",
      "mcp__big__* (MCP server): 80 tools (get, list, create, update, delete, …); tool_search finds them",
      "mcp__small__* (MCP server): 1 tool (only); tool_search finds them",
    ]);
  });
});

describe("mcpResultOutput", () => {
  it("keeps text as text and shows a real image as an image block", () => {
    expect(mcpResultOutput({ content: [{ type: "text", text: "hi" }] })).toEqual({ content: "hi" });
    const out = mcpResultOutput({
      content: [
        { type: "text", text: "look" },
        { type: "image", data: PIXEL, mimeType: "image/png" },
      ],
    });
    expect(out.blocks).toEqual([
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
    ]);
  });

  it("refuses images the model may not be shown, saying why", () => {
    const cases: [string, string, RegExp][] = [
      [PIXEL, "image/jpeg", /not a image\/jpeg image/],
      [PIXEL, "image/tiff", /image\/tiff cannot be sent to the model/],
      ["%%%", "image/png", /not valid base64/],
      [btoa("x".repeat(6 * 1024 * 1024)), "image/png", /an image may be at most 5242880 \(5 MB of base64\)/],
    ];
    for (const [data, mimeType, why] of cases) {
      const out = mcpResultOutput({ content: [{ type: "image", data, mimeType }] });
      expect(out.blocks).toBeUndefined();
      expect(out.content).toMatch(why);
    }
  });

  it("names resource links and embedded resources by uri, with embedded text", () => {
    const out = mcpResultOutput({
      content: [
        { type: "resource_link", uri: "https://x.test/a", name: "a" },
        { type: "resource", resource: { uri: "file:///b.txt", mimeType: "text/plain", text: "body b" } },
        { type: "resource", resource: { uri: "file:///c.bin", blob: btoa("1234") } },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      ],
      isError: true,
    });
    expect(out).toEqual({
      content:
        "[resource link: a <https://x.test/a>]\n[resource <file:///b.txt> text/plain]\nbody b\n[resource <file:///c.bin>] binary, 4 bytes, not shown\n[audio content not shown]",
      isError: true,
    });
  });

  it("falls back to structured content when there are no blocks", () => {
    expect(mcpResultOutput({ content: [], structuredContent: { n: 1 } }).content).toBe('{"n":1}');
    expect(mcpResultOutput({}).content).toBe("(no content)");
  });
});
