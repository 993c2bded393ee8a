import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { api, createConversation, eventually, newTenant } from "./helpers";
import { holdMessageWrite } from "./object-bindings";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "2",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
};

/** A turn through the app with its real bindings but LIMITS. */
const turn = async (key: string, id: string, content: string): Promise<number> =>
  (await callWith(LIMITS, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: { content } })).status;

const search = async (q: string, key: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json.data;
const usageOf = async (key: string) => (await api("GET", "/v1/usage", undefined, { key })).json.total;

describe("a turn whose conversation is deleted while it runs", () => {
  it("keeps its turn token: its 404 is not a refusal before running", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect(await turn(key, id, "first turn garnet-ran")).toBe(200);
    // Indexed: the tenant has its cortex shard (the swapped binding below hides the shard list).
    await eventually(async () => (await search("garnet-ran", key)).length > 0);
    // Holds the turn's message-batch write that holds a tool call: after its first model call.
    const { atPut, release } = await holdMessageWrite(
      id,
      (body) => typeof body === "string" && body.includes('"tool_use"'),
    );
    const second = turn(key, id, '@tool memory_search {"query":"x"}\nthen an answer');
    await atPut;
    const deleting = api("DELETE", `/v1/conversations/${id}`, undefined, { key });
    await new Promise((r) => setTimeout(r, 200));
    release();
    expect((await deleting).status).toBe(204);
    expect(await second).toBe(404);
    await eventually(async () => (await usageOf(key)).turns === 2);
    // Both turns ran and spent the key's two turns of the minute.
    const other = await createConversation(undefined, key);
    expect(await turn(key, other, "a third turn")).toBe(429);
  });
});
