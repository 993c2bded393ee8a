// Stopping a running turn: POST /stop and the websocket's `stop` frame end it as "interrupted" with
// what it streamed saved; a stop is idempotent, tenant-isolated, and bad input is a 400. The
// offline model's `@hold-stream` keeps the reply open until it is stopped, so without a working
// stop these turns would never end.
import { describe, expect, inject, it } from "vitest";
import { api, connectSocket, createConversation, newTenant, send, transcript } from "./helpers";
import { ofType } from "../blocks";

const HELD = "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200";

const socketOf = (id: string, key = "dev-local-key") => connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });

/** Waits until the held reply has streamed its first part; its turnId and the text so far. */
async function streaming(c: Awaited<ReturnType<typeof socketOf>>) {
  const start = await c.next((e) => e.type === "turn_start");
  await c.next((e) => e.type === "delta" && e.turnId === start.turnId);
  return start.turnId as string;
}
const streamed = (c: Awaited<ReturnType<typeof socketOf>>, turnId: string) =>
  c.events.filter((e) => e.type === "delta" && e.turnId === turnId).map((e) => ofType(e, "delta").text).join("");

describe("stopping a turn", () => {
  it("POST /stop ends an HTTP turn as interrupted, saving what was streamed, and answers the same when repeated", async () => {
    const id = await createConversation();
    const watch = await socketOf(id);
    const turn = send(id, HELD);
    const turnId = await streaming(watch);
    const stop = await api("POST", `/v1/conversations/${id}/stop`, {});
    expect(stop.status).toBe(200);
    expect(stop.json).toEqual({ turnId, stopped: true });
    const answer = await turn;
    expect(answer.status).toBe(200);
    expect(answer.json.stop_reason).toBe("interrupted");
    const end = ofType(await watch.next((e) => e.type === "turn_end" && e.turnId === turnId), "turn_end");
    expect(end.stop_reason).toBe("interrupted");
    // The stop answered after the turn settled: the partial reply is already in the transcript.
    const saved = await transcript(id);
    expect(saved.map((m) => [m.role, m.stopReason ?? null])).toEqual([["user", null], ["assistant", "interrupted"]]);
    const text = saved[1].content.filter((b) => b.type === "text").map((b) => b.text).join("");
    expect(text).toBe(streamed(watch, turnId));
    expect(text.length).toBeGreaterThanOrEqual(200);
    expect(text.length).toBeLessThan(1000);
    expect(answer.json.messages.map((m) => m.id)).toEqual(saved.map((m) => m.id));
    // Idempotent: the same stop again changes nothing and answers the same; nothing runs now.
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId })).json).toEqual({ turnId, stopped: true });
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).json).toEqual({ turnId: null, stopped: false });
    expect((await transcript(id)).length).toBe(2);
    // The conversation goes on; the interrupted reply is part of the next request's history.
    const next = await send(id, "go on");
    expect(next.json.stop_reason).toBe("end_turn");
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    watch.ws!.close();
  });

  it("a `stop` frame stops the turn it names and answers `stopped` to its socket; every socket sees the turn end", async () => {
    const id = await createConversation();
    const c = await socketOf(id);
    const other = await socketOf(id);
    c.ws!.send(JSON.stringify({ type: "send", content: HELD }));
    const turnId = await streaming(c);
    c.ws!.send(JSON.stringify({ type: "stop", turnId }));
    expect(await c.next((e) => e.type === "stopped")).toEqual({ type: "stopped", turnId, stopped: true });
    expect((await other.next((e) => e.type === "turn_end")).stop_reason).toBe("interrupted");
    expect(other.events.some((e) => e.type === "stopped")).toBe(false);
    const saved = await transcript(id);
    expect(saved[1]).toMatchObject({ role: "assistant", stopReason: "interrupted" });
    // A finished turn is not stopped: the answer says so.
    c.ws!.send(JSON.stringify({ type: "send", content: "short one" }));
    const done = ofType(await c.next((e) => e.type === "turn_end" && e.turnId !== turnId), "turn_end");
    expect(done.stop_reason).toBe("end_turn");
    c.ws!.send(JSON.stringify({ type: "stop", turnId: done.turnId }));
    expect(await c.next((e) => e.type === "stopped" && e.turnId === done.turnId)).toEqual({ type: "stopped", turnId: done.turnId, stopped: false });
    c.ws!.close();
    other.ws!.close();
  });

  it("another tenant's key cannot stop the turn (404), and bad input is a 400 naming the field", async () => {
    const id = await createConversation();
    const watch = await socketOf(id);
    const turn = send(id, HELD);
    const turnId = await streaming(watch);
    const stranger = await newTenant();
    const refused = await api("POST", `/v1/conversations/${id}/stop`, { turnId }, { key: stranger });
    expect(refused.status).toBe(404);
    expect(refused.json.error?.type).toBe("not_found");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {}, { key: "" })).status).toBe(401);
    const bad = await api("POST", `/v1/conversations/${id}/stop`, { turnId: "turn_nope" });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/turnId/);
    const extra = await api("POST", `/v1/conversations/${id}/stop`, { turnId, now: true });
    expect(extra.status).toBe(400);
    expect(extra.json.error?.message).toMatch(/now/);
    watch.ws!.send(JSON.stringify({ type: "stop", turnId: 7 }));
    expect((await watch.next((e) => e.type === "error")).error.message).toMatch(/turnId/);
    // None of that stopped it: it is still streaming, and its own tenant stops it.
    expect(watch.events.some((e) => e.type === "turn_end")).toBe(false);
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId })).json).toEqual({ turnId, stopped: true });
    expect((await turn).json.stop_reason).toBe("interrupted");
    watch.ws!.close();
  });
  it("a stop while a tool runs ends the step: later calls (a client's too) are answered as interrupted, the turn is not left paused", async () => {
    const key = await newTenant();
    const tool = await api("POST", "/v1/tools", { kind: "http", name: "slow_lookup", description: "A lookup that takes a while.", inputSchema: { type: "object" }, endpoint: `${inject("httpToolServer")}/slow?ms=1500`, timeoutMs: 10_000 }, { key });
    expect(tool.status).toBe(201);
    const id = await createConversation(undefined, key);
    await send(id, `@tool tool_activate {"name":"slow_lookup"}`, key);
    const watch = await socketOf(id, key);
    const tools = [{ name: "get_weather", input_schema: { type: "object" } }];
    const turn = api("POST", `/v1/conversations/${id}/messages`, { content: `@tool slow_lookup {}\n@tool get_weather {"city":"Oslo"}`, tools }, { key });
    const call = ofType(await watch.next((e) => e.type === "tool_use" && e.name === "slow_lookup"), "tool_use");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {}, { key })).json).toEqual({ turnId: call.turnId, stopped: true });
    const answer = await turn;
    expect(answer.json.stop_reason).toBe("interrupted");
    expect(answer.json.requires_action).toBeUndefined();
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.requiresAction ?? null).toBeNull();
    const saved = await transcript(id, key);
    const results = saved[saved.length - 1].content.filter((b) => b.type === "tool_result");
    expect(results.map((b) => [b.content, b.is_error ?? false])).toEqual([["late", false], [expect.stringContaining("no result"), true]]);
    // Nothing waits for the client: the next turn is taken.
    expect((await send(id, "go on", key)).status).toBe(200);
    watch.ws!.close();
  });
});
