// An MCP tool whose small schema nests unions through $refs (1.9 KB: four levels of 20 refs) was
// flattened into a note of 1.7 MB in its description: once activated, every later turn was a 502
// context_overflow. Each union is walked once however many refs reach it now: the tool keeps its
// argument, with a one-line note, and turns go on.
import { describe, expect, it } from "vitest";
import { INPUT_SCHEMA_MAX_BYTES } from "../../core/tenant-tool-rules";
import { api, createConversation, newTenant, send } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

const fake = installFakeMcp();

/** `levels` definitions, each a union of `n` refs to the next, the last an object: n^levels paths. */
function nested(n: number, levels = 4) {
  const $defs: Record<string, unknown> = {
    [`D${levels}`]: { type: "object", properties: { x: { type: "string" } } },
  };
  for (let l = levels - 1; l >= 1; l--)
    $defs[`D${l}`] = { anyOf: Array.from({ length: n }, () => ({ $ref: `#/$defs/D${l + 1}` })) };
  return { type: "object", anyOf: Array.from({ length: n }, () => ({ $ref: "#/$defs/D1" })), $defs };
}

describe("an MCP tool with unions nested through $refs", () => {
  it("once activated, leaves the next turns answering, its description and schema small", async () => {
    const key = await newTenant();
    fake.tools["/nested"] = [{ name: "echo", description: "echo", inputSchema: nested(20) }];
    const s = await api("POST", "/v1/mcp-servers", { name: "nested", url: `${FAKE_MCP}/nested` }, { key });
    expect(s.status, s.text).toBe(201);
    const conv = await createConversation(undefined, key);
    const activated = await send(conv, `@tool tool_activate {"name":"mcp__nested__echo"}`, key);
    expect(activated.status).toBe(200);
    const replay = (await api("GET", `/v1/conversations/${conv}/replay`, undefined, { key })).json;
    const tool = replay.tools.find((t) => t.name === "mcp__nested__echo");
    expect(tool).toBeDefined();
    // Compared as numbers and a short string: a failure would otherwise print the whole 1.7 MB note.
    const description = String(tool!.description);
    expect(description.length).toBeLessThan(400);
    expect(description).not.toContain("offered without arguments");
    expect(Object.keys((tool!.input_schema as { properties?: object }).properties ?? {})).toEqual(["x"]);
    expect(new TextEncoder().encode(JSON.stringify(tool!.input_schema)).byteLength).toBeLessThan(
      INPUT_SCHEMA_MAX_BYTES,
    );
    const next = await send(conv, "hello after activation", key);
    expect(next.status, next.text.slice(0, 300)).toBe(200);
  }, 120_000);
});
