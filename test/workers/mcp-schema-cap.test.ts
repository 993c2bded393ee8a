// An MCP tool's schema rides every request once the tool is active: one past INPUT_SCHEMA_MAX_BYTES
// (the cap an HTTP or client tool's schema has) is offered without arguments, its description
// saying why, instead of costing hundreds of thousands of input tokens on every request.
import { describe, expect, it } from "vitest";
import { INPUT_SCHEMA_MAX_BYTES } from "../../core/tenant-tool-rules";
import { api, createConversation, newTenant, send } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

const fake = installFakeMcp();

describe("an MCP tool with a schema past the cap", () => {
  it("is offered without arguments, and its description says why", async () => {
    const key = await newTenant();
    const fat = {
      type: "object",
      properties: { a: { type: "string", description: "x".repeat(1_250_000) } },
    };
    fake.tools["/fat"] = [{ name: "fat", description: "a fat tool", inputSchema: fat }];
    const r = await api("POST", "/v1/mcp-servers", { name: "fat", url: `${FAKE_MCP}/fat` }, { key });
    expect(r.status).toBe(201);
    expect(r.json.toolsError).toBeNull();
    const conv = await createConversation(undefined, key);
    await send(conv, `@tool tool_activate {"name":"mcp__fat__fat"}`, key);
    const replay = (await api("GET", `/v1/conversations/${conv}/replay`, undefined, { key })).json;
    const tool = replay.tools.find((t) => t.name === "mcp__fat__fat");
    expect(tool).toBeDefined();
    // Compared as a short string: a failure would otherwise print the whole 1.25 MB schema.
    expect(JSON.stringify(tool!.input_schema).slice(0, 200)).toBe('{"type":"object","properties":{}}');
    expect(tool!.description).toContain(`more than the ${INPUT_SCHEMA_MAX_BYTES}`);
    expect(tool!.description).toContain("offered without arguments");
    expect(new TextEncoder().encode(JSON.stringify(replay.tools)).byteLength).toBeLessThan(100_000);
  }, 120_000);
});
