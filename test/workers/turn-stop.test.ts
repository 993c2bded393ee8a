// Stopping a running turn: POST /stop and the websocket's `stop` frame end it as "interrupted" with
// what it streamed saved; a stop is idempotent, tenant-isolated, and bad input is a 400. The
// offline model's `@hold-stream` keeps the reply open until it is stopped, so without a working
// stop these turns would never end.
import { describe, expect, inject, it } from "vitest";
import { STOP_WAIT_MS } from "../../durable-objects/conversation/turn-stops";
import { api, connectSocket, createConversation, newTenant, send, transcript } from "./helpers";
import { blockAs, blocksOf, ofType } from "../blocks";

const HELD = "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200";

const socketOf = (id: string, key = "dev-local-key") =>
  connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });

/** Waits until the held reply has streamed its first part; its turnId and the text so far. */
async function streaming(c: Awaited<ReturnType<typeof socketOf>>) {
  const start = await c.next((e) => e.type === "turn_start");
  await c.next((e) => e.type === "delta" && e.turnId === start.turnId);
  return start.turnId as string;
}
const streamed = (c: Awaited<ReturnType<typeof socketOf>>, turnId: string) =>
  c.events
    .filter((e) => e.type === "delta" && e.turnId === turnId)
    .map((e) => ofType(e, "delta").text)
    .join("");

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
    expect(saved.map((m) => [m.role, m.stopReason ?? null])).toEqual([
      ["user", null],
      ["assistant", "interrupted"],
    ]);
    const text = saved[1].content
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("");
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
    expect(await c.next((e) => e.type === "stopped" && e.turnId === done.turnId)).toEqual({
      type: "stopped",
      turnId: done.turnId,
      stopped: false,
    });
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
    const tool = await api(
      "POST",
      "/v1/tools",
      {
        kind: "http",
        name: "slow_lookup",
        description: "A lookup that takes a while.",
        inputSchema: { type: "object" },
        endpoint: `${inject("httpToolServer")}/slow?ms=1500`,
        timeoutMs: 10_000,
      },
      { key },
    );
    expect(tool.status).toBe(201);
    const id = await createConversation(undefined, key);
    await send(id, `@tool tool_activate {"name":"slow_lookup"}`, key);
    const watch = await socketOf(id, key);
    const tools = [{ name: "get_weather", input_schema: { type: "object" } }];
    const turn = api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: `@tool slow_lookup {}\n@tool get_weather {"city":"Oslo"}`, tools },
      { key },
    );
    const call = ofType(await watch.next((e) => e.type === "tool_use" && e.name === "slow_lookup"), "tool_use");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {}, { key })).json).toEqual({
      turnId: call.turnId,
      stopped: true,
    });
    const answer = await turn;
    expect(answer.json.stop_reason).toBe("interrupted");
    expect(answer.json.requires_action).toBeUndefined();
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.requiresAction ?? null).toBeNull();
    const saved = await transcript(id, key);
    const results = saved[saved.length - 1].content.filter((b) => b.type === "tool_result");
    expect(results.map((b) => [b.content, b.is_error ?? false])).toEqual([
      ["late", false],
      [expect.stringContaining("no result"), true],
    ]);
    // Nothing waits for the client: the next turn is taken.
    expect((await send(id, "go on", key)).status).toBe(200);
    watch.ws!.close();
  });

  it("a turn resumed with client tool results is stopped like a fresh one: ended as interrupted, its stop remembered", async () => {
    const key = await newTenant();
    const id = await slowToolConversation(key, 1500);
    const watch = await socketOf(id, key);
    const tools = [{ name: "get_weather", input_schema: { type: "object" } }];
    const paused = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: `@tools-per-step 1\n@tool get_weather {"city":"Oslo"}\n@tool slow_lookup {}`, tools },
      { key },
    );
    expect(paused.json.stop_reason).toBe("requires_action");
    const turnId = paused.json.turnId;
    const [call] = paused.json.requires_action?.calls ?? [];
    const resumed = api(
      "POST",
      `/v1/conversations/${id}/tool-results`,
      { results: [{ tool_use_id: call.id, content: "sunny" }] },
      { key },
    );
    // The continuation's next step runs a slow tool: the stop reaches the turn while it runs.
    await watch.next((e) => e.type === "tool_use" && e.name === "slow_lookup" && e.turnId === turnId);
    expect((await api("POST", `/v1/conversations/${id}/stop`, {}, { key })).json).toEqual({ turnId, stopped: true });
    const answer = await resumed;
    expect(answer.status).toBe(200);
    expect(answer.json.stop_reason).toBe("interrupted");
    // The running tool's result is kept and no further model call is made: the turn ends on it.
    const saved = await transcript(id, key);
    const last = saved[saved.length - 1];
    expect(last.role).toBe("user");
    expect(last.content.map((b) => [b.type, "content" in b ? b.content : undefined])).toEqual([
      ["tool_result", "late"],
    ]);
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId }, { key })).json).toEqual({
      turnId,
      stopped: true,
    });
    expect((await send(id, "go on", key)).json.stop_reason).toBe("end_turn");
    watch.ws!.close();
  });

  it("a continuation resumed by a `tool_results` frame is stopped by a `stop` frame", async () => {
    const key = await newTenant();
    const id = await slowToolConversation(key, 1500);
    const c = await socketOf(id, key);
    const tools = [{ name: "get_weather", input_schema: { type: "object" } }];
    c.ws!.send(
      JSON.stringify({
        type: "send",
        content: `@tools-per-step 1\n@tool get_weather {"city":"Oslo"}\n@tool slow_lookup {}`,
        tools,
      }),
    );
    const action = await c.next((e) => e.type === "requires_action");
    c.ws!.send(
      JSON.stringify({ type: "tool_results", results: [{ tool_use_id: action.calls[0].id, content: "sunny" }] }),
    );
    await c.next((e) => e.type === "tool_use" && e.name === "slow_lookup");
    c.ws!.send(JSON.stringify({ type: "stop", turnId: action.turnId }));
    expect(await c.next((e) => e.type === "stopped")).toEqual({
      type: "stopped",
      turnId: action.turnId,
      stopped: true,
    });
    const ends = c.events.flatMap((e) => (e.type === "turn_end" && e.turnId === action.turnId ? [e.stop_reason] : []));
    expect(ends).toEqual(["requires_action", "interrupted"]);
    c.ws!.close();
  });

  it("a turn cancelled while it waits no longer counts ahead of the turns after it", async () => {
    const id = await createConversation();
    const watch = await socketOf(id);
    const first = send(id, HELD);
    await streaming(watch);
    const second = send(id, "A second question.");
    const queued = await watch.next((e) => e.type === "turn_queued");
    expect(queued.ahead).toBe(1);
    await api("POST", `/v1/conversations/${id}/stop`, { turnId: queued.turnId });
    expect((await second).json.stop_reason).toBe("interrupted");
    // The first turn still streams; only it is ahead of a third.
    const third = send(id, "A third question.");
    const next = await watch.next((e) => e.type === "turn_queued" && e.turnId !== queued.turnId);
    expect(next.type === "turn_queued" && next.ahead).toBe(1);
    await api("POST", `/v1/conversations/${id}/stop`, {});
    expect((await first).json.stop_reason).toBe("interrupted");
    expect((await third).json.stop_reason).toBe("end_turn");
    watch.ws!.close();
  });

  it("a stop naming a queued turn cancels it before it runs; a stop without a turnId stops only the running turn", async () => {
    const id = await createConversation();
    const watch = await socketOf(id);
    const first = send(id, HELD);
    const running = await streaming(watch);
    const second = send(id, "A second question.");
    // A turn that must wait is announced with its id, so it can be named.
    const queued = await watch.next((e) => e.type === "turn_queued");
    expect(queued.ahead).toBe(1);
    expect(queued.turnId).not.toBe(running);
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId: queued.turnId })).json).toEqual({
      turnId: queued.turnId,
      stopped: true,
    });
    // Its caller is answered at once, while the first turn still streams: it never ran.
    const cancelled = await second;
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ turnId: queued.turnId, stop_reason: "interrupted", messages: [] });
    expect(cancelled.json.usage?.output_tokens).toBe(0);
    expect(watch.events.some((e) => e.type === "turn_end" && e.turnId === running)).toBe(false);
    // No turnId: the running turn, never the queued ones.
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).json).toEqual({ turnId: running, stopped: true });
    expect((await first).json.stop_reason).toBe("interrupted");
    // Once its place has passed, it still has not run: nothing of it is saved, no model call made.
    expect((await send(id, "A third question.")).json.stop_reason).toBe("end_turn");
    const saved = await transcript(id);
    expect(saved.map((m) => [m.role, m.stopReason ?? null])).toEqual([
      ["user", null],
      ["assistant", "interrupted"],
      ["user", null],
      ["assistant", "end_turn"],
    ]);
    expect(saved.some((m) => JSON.stringify(m.content).includes("A second question"))).toBe(false);
    expect(watch.events.filter((e) => "turnId" in e && e.turnId === queued.turnId).map((e) => e.type)).toEqual([
      "turn_queued",
      "turn_start",
      "turn_end",
    ]);
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId: queued.turnId })).json).toEqual({
      turnId: queued.turnId,
      stopped: true,
    });
    watch.ws!.close();
  });

  it("a queued `send` frame's turn is cancelled by a `stop` frame naming it", async () => {
    const id = await createConversation();
    const c = await socketOf(id);
    c.ws!.send(JSON.stringify({ type: "send", content: HELD }));
    const running = await streaming(c);
    c.ws!.send(JSON.stringify({ type: "send", content: "A second question." }));
    const queued = await c.next((e) => e.type === "turn_queued");
    c.ws!.send(JSON.stringify({ type: "stop", turnId: queued.turnId }));
    expect(await c.next((e) => e.type === "stopped")).toEqual({
      type: "stopped",
      turnId: queued.turnId,
      stopped: true,
    });
    expect(
      ofType(await c.next((e) => e.type === "turn_end" && e.turnId === queued.turnId), "turn_end").stop_reason,
    ).toBe("interrupted");
    c.ws!.send(JSON.stringify({ type: "stop" }));
    expect(await c.next((e) => e.type === "stopped" && e.turnId === running)).toEqual({
      type: "stopped",
      turnId: running,
      stopped: true,
    });
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant"]);
    c.ws!.close();
  });

  it("answers stopped: false when the turn has not ended as interrupted by the time the wait runs out, true once it has", {
    timeout: 60_000,
  }, async () => {
    const key = await newTenant();
    const id = await slowToolConversation(key, STOP_WAIT_MS + 3_000);
    const watch = await socketOf(id, key);
    const turn = send(id, "@tool slow_lookup {}", key);
    const call = ofType(await watch.next((e) => e.type === "tool_use" && e.name === "slow_lookup"), "tool_use");
    // The tool outlasts the stop's wait: the turn has not ended, so it is not (yet) stopped.
    expect((await api("POST", `/v1/conversations/${id}/stop`, {}, { key })).json).toEqual({
      turnId: call.turnId,
      stopped: false,
    });
    expect((await turn).json.stop_reason).toBe("interrupted");
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId: call.turnId }, { key })).json).toEqual({
      turnId: call.turnId,
      stopped: true,
    });
    watch.ws!.close();
  });

  it("a sub-agent stopped with its turn is reported to the master as interrupted, not as an error", async () => {
    const id = await createConversation();
    await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
    const watch = await socketOf(id);
    const task = "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200";
    const turn = send(id, `@tool agent_delegate ${JSON.stringify({ name: "writer", task })}`);
    const delta = ofType(await watch.next((e) => e.type === "delta" && e.agent?.name === "writer"), "delta");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).json).toEqual({
      turnId: delta.turnId,
      stopped: true,
    });
    expect((await turn).json.stop_reason).toBe("interrupted");
    const saved = await transcript(id);
    const partial = saved.find((m) => m.agent && m.role === "assistant");
    if (!partial) throw new Error("no partial answer saved");
    expect(partial.stopReason).toBe("interrupted");
    const result = blockAs(
      saved.flatMap((m) => (m.agent ? [] : m.content)).findLast((b) => b.type === "tool_result"),
      "tool_result",
    );
    expect(result.is_error ?? false).toBe(false);
    expect(result.content).toMatch(
      /^\[agent writer: 0 model calls; .*\]\n\[interrupted: the turn was stopped before the agent finished; its answer is partial\]/,
    );
    expect(result.content).toContain(
      blocksOf(partial.content, "text")
        .map((b) => b.text)
        .join(""),
    );
    watch.ws!.close();
  });
});

/** A tenant's conversation with an HTTP tool `slow_lookup` (answers "late" after `ms`) active. */
async function slowToolConversation(key: string, ms: number): Promise<string> {
  const tool = await api(
    "POST",
    "/v1/tools",
    {
      kind: "http",
      name: "slow_lookup",
      description: "A lookup that takes a while.",
      inputSchema: { type: "object" },
      endpoint: `${inject("httpToolServer")}/slow?ms=${ms}`,
      timeoutMs: 30_000,
    },
    { key },
  );
  expect(tool.status).toBe(201);
  const id = await createConversation(undefined, key);
  await send(id, `@tool tool_activate {"name":"slow_lookup"}`, key);
  return id;
}
