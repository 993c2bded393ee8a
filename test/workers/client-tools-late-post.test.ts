// Results posted after a paused turn's wait was closed without them (its wait ran out, or a stop
// ended it) are refused saying how it was closed, never "results already posted": nothing was.
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, inConversation, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const post = (id: string, results: unknown[]) => api("POST", `/v1/conversations/${id}/tool-results`, { results });
const pause = (id: string) =>
  api("POST", `/v1/conversations/${id}/messages`, { content: `@tool get_weather {"city":"Rome"}`, tools: [weather] });

describe("client tool results posted late", () => {
  it("after the wait ran out: 409 naming when it stopped waiting, not 'already posted'", async () => {
    const id = await createConversation({ clientToolTimeoutSeconds: 1 });
    const paused = await pause(id);
    const { calls, expiresAt } = paused.json.requires_action!;
    await new Promise((r) => setTimeout(r, 1_200));
    await runDurableObjectAlarm(stubOf(id));
    await eventually(async () => (await transcript(id)).length === 3);
    const late = await post(id, [{ tool_use_id: calls[0].id, content: "sunny" }]);
    expect(late.status).toBe(409);
    expect(late.json.error?.type).toBe("tool_results_conflict");
    expect(late.json.error?.message).not.toMatch(/already posted/);
    expect(late.json.error?.message).toBe(
      `the turn stopped waiting at ${new Date(expiresAt).toISOString()}; its calls are closed as interrupted`,
    );
    // Across an eviction too: how the call was closed is kept in storage.
    await evictDurableObject(stubOf(id));
    const again = await post(id, [{ tool_use_id: calls[0].id, content: "sunny" }]);
    expect(again.status).toBe(409);
    expect(again.json.error?.message).toMatch(/stopped waiting at/);
  });

  it("after a stop ended the wait: 409 saying the turn was stopped", async () => {
    const id = await createConversation();
    const paused = await pause(id);
    const { turnId, calls } = paused.json.requires_action!;
    const stop = await api("POST", `/v1/conversations/${id}/stop`, { turnId });
    expect(stop.json).toEqual({ turnId, stopped: true });
    const late = await post(id, [{ tool_use_id: calls[0].id, content: "sunny" }]);
    expect(late.status).toBe(409);
    expect(late.json.error?.type).toBe("tool_results_conflict");
    expect(late.json.error?.message).not.toMatch(/already posted/);
    expect(late.json.error?.message).toBe(`turn ${turnId} was stopped; its calls are closed as interrupted`);
  });

  it("a real second post still says 'results already posted', also for ids kept in the old plain form", async () => {
    const id = await createConversation();
    const paused = await pause(id);
    const [call] = paused.json.requires_action!.calls;
    const first = await post(id, [{ tool_use_id: call.id, content: "sunny" }]);
    expect(first.status).toBe(200);
    const second = await post(id, [{ tool_use_id: call.id, content: "sunny" }]);
    expect(second.status).toBe(409);
    expect(second.json.error?.message).toBe(`results already posted for: ${call.id}`);
    // An object whose answered ids were written before how they closed was kept (plain strings).
    await inConversation(id, (_i, state) => state.storage.put("client-answered-ids", [call.id]));
    await evictDurableObject(stubOf(id));
    const old = await post(id, [{ tool_use_id: call.id, content: "sunny" }]);
    expect(old.status).toBe(409);
    expect(old.json.error?.message).toBe(`results already posted for: ${call.id}`);
  });
});
