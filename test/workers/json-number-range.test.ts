// A JSON number past the double range (1e400) parses to Infinity, which JSON.stringify writes as
// null: taken, it would be stored or sent as something else than was given. Every JSON body, import
// and socket frame refuses it as a 400 naming where it is, before anything is written.
import { describe, expect, it } from "vitest";
import { parseClientFrame } from "../../durable-objects/conversation/socket-frames";
import { api, createConversation, newTenant, transcript } from "./helpers";

const post = (path: string, body: string, key: string) =>
  api("POST", path as "/v1/tools", body, { key, raw: true, headers: { "content-type": "application/json" } });

describe("a number out of the double range", () => {
  it("in a tool's schema is a 400 naming it, and no tool is made", async () => {
    const key = await newTenant();
    const r = await post(
      "/v1/tools",
      '{"kind":"http","name":"inf_tool","description":"d","endpoint":"https://example.com/hook","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}}',
      key,
    );
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toContain("inputSchema.properties.n.maximum: a number out of range");
    expect((await api("GET", "/v1/tools", undefined, { key })).json.data).toEqual([]);
  });

  it("in a turn's client tool is a 400 and the prompt is not saved", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await post(
      `/v1/conversations/${id}/messages`,
      '{"content":"hello","tools":[{"name":"calc","description":"d","input_schema":{"type":"object","properties":{"n":{"type":"number","minimum":-1e400}}}}]}',
      key,
    );
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toContain("a number out of range");
    expect(await transcript(id, key)).toEqual([]);
  });

  it("in an imported message is a 400 and nothing is imported", async () => {
    const key = await newTenant();
    const r = await post(
      "/v1/conversations/import",
      '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_inf1","name":"calc","input":{"n":1e400}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_inf1","content":"ok"}]},{"role":"assistant","content":"done"}]}',
      key,
    );
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toContain("a number out of range");
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toEqual([]);
  });

  it("in a socket frame is refused", () => {
    const frame = parseClientFrame(
      '{"type":"send","content":"hi","tools":[{"name":"c","input_schema":{"type":"object","x":1e999}}]}',
    );
    expect(frame.ok).toBe(false);
    expect(frame.ok ? "" : frame.error).toContain("a number out of range");
  });

  it("a large number within range is taken", async () => {
    const key = await newTenant();
    const r = await post(
      "/v1/tools",
      '{"kind":"http","name":"big_tool","description":"d","endpoint":"https://example.com/hook","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1e300}}}}',
      key,
    );
    expect(r.status).toBe(201);
  });
});
