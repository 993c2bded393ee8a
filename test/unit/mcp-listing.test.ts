// What an MCP server's answers may put into the platform: a tool list that ends (a repeated page
// cursor, a page cap, one deadline for the whole listing), no tool name a request could not carry
// (too long, or a lone surrogate: the system prompt of every conversation would hold it), and
// well-formed text in results.
import { describe, expect, it } from "vitest";
import { indexLines } from "../../agent/tools/capability-index";
import type { ToolDefinition } from "../../agent/tools/registry";
import type { McpConnection } from "../../services/mcp/connect";
import { listWith, MAX_LIST_PAGES, MAX_MCP_NAME } from "../../services/mcp/listing";
import { mcpResultOutput } from "../../services/mcp/results";

type Page = { tools: { name: string; description?: string; inputSchema: object }[]; nextCursor?: string };

/** A connection whose tools/list answers `page(cursor)`, counting the pages asked for. */
function serverAnswering(page: (cursor: string | undefined) => Page | Promise<Page>) {
  const asked = { pages: 0 };
  const conn = {
    client: {
      listTools: async (params: { cursor?: string }) => {
        asked.pages++;
        return page(params.cursor);
      },
    },
    transport: "streamable-http",
    secret: {},
    guard: <T>(work: Promise<T>) => work,
    close: async () => {},
  } as unknown as McpConnection;
  return { conn, asked };
}
const tool = (name: string) => ({ name, description: `does ${name}`, inputSchema: { type: "object" } });

describe("an MCP tool list", () => {
  it("ends when the server repeats a page cursor", async () => {
    const { conn, asked } = serverAnswering(() => ({ tools: [tool("same")], nextCursor: "again" }));
    const { tools, note } = await listWith(conn, "loop", 5_000);
    expect(tools.map((t) => t.mcpName)).toEqual(["same"]);
    expect(asked.pages).toBe(2);
    // The page served again listed "same" a second time: left out, and named, as any repeated name is.
    expect(note).toBe(
      "the server repeated a page of its tool list; the list stops there; 1 tool left out: the name of a tool listed before it (same)",
    );
  });

  it(`reads at most ${MAX_LIST_PAGES} pages`, async () => {
    const { conn, asked } = serverAnswering((cursor) => {
      const n = Number(cursor ?? 0);
      return { tools: [tool(`t${n}`)], nextCursor: String(n + 1) };
    });
    const { tools, note } = await listWith(conn, "pages", 5_000);
    expect(asked.pages).toBe(MAX_LIST_PAGES);
    expect(tools).toHaveLength(MAX_LIST_PAGES);
    expect(note).toBe(`only the first ${MAX_LIST_PAGES} pages of tools are listed`);
  });

  it("is bounded by one deadline for all its pages, not one per page", async () => {
    const { conn } = serverAnswering(async (cursor) => {
      await new Promise((r) => setTimeout(r, 60));
      return { tools: [tool(`t${cursor ?? 0}`)], nextCursor: `${Number(cursor ?? 0) + 1}` };
    });
    const started = Date.now();
    await expect(listWith(conn, "slow", 250)).rejects.toThrow(/listing tools took longer than/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("leaves out a name no request could carry, and says so; descriptions are made well-formed", async () => {
    const { conn } = serverAnswering(() => ({
      tools: [
        tool("x".repeat(MAX_MCP_NAME + 1)),
        tool("a\ud800lookup"),
        { name: "ok", description: "half \ud83d", inputSchema: { type: "object" } },
      ],
    }));
    const { tools, note } = await listWith(conn, "names", 5_000);
    expect(tools.map((t) => t.mcpName)).toEqual(["ok"]);
    expect(tools[0].description.isWellFormed()).toBe(true);
    expect(note).toBe(`2 tools left out: a name longer than ${MAX_MCP_NAME} characters or not valid Unicode`);
  });

  it("puts no more than a short verb of each tool's name into the prompt's index line", () => {
    const member = (shortName: string) =>
      ({ name: "mcp__s__x", shortName, indexGroup: "mcp__s__* (MCP server)" }) as ToolDefinition<unknown>;
    const [line] = indexLines([member(`${"v".repeat(10_000)}_thing`), member("get_forecast")]);
    expect(line.length).toBeLessThan(200);
    expect(line).toContain("get");
  });
});

describe("an MCP result's text", () => {
  it("is well-formed: a lone surrogate becomes U+FFFD", () => {
    const out = mcpResultOutput({ content: [{ type: "text", text: "cut \ud83d here" }] });
    expect(out.content).toBe("cut \ufffd here");
  });
});
