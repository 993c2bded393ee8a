// Client tools: a call pauses the turn (requires_action), the client posts the results, the same
// turn goes on. The paused turn lives in the object's storage, so it survives an eviction.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { toToolResultBlock } from "../../core/client-tools";
import { INTERRUPTED_TOOL_RESULT } from "../../core/replay";
import { Client } from "../../client";
import { PausedTurns } from "../../durable-objects/conversation/paused-turn";
import {
  api,
  connectSocket,
  type ConversationInternals,
  createConversation,
  DEV_KEY,
  eventually,
  inConversation,
  transcript,
  worker,
} from "./helpers";
import { ofType, resultText } from "../blocks";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import type { TurnEvent } from "../../client";
import { TOO_MANY_CLIENT_CALLS } from "../../agent/tool-step";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const clock = {
  name: "read_clock",
  description: "The client's clock",
  input_schema: { type: "object", properties: {} },
};
const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const turn = (id: string, content: string, tools: unknown[] = [weather], headers: Record<string, string> = {}) =>
  api("POST", `/v1/conversations/${id}/messages`, { content, tools }, { headers });
const post = (id: string, results: unknown[], headers: Record<string, string> = {}) =>
  api("POST", `/v1/conversations/${id}/tool-results`, { results }, { headers });
const sse = (text: string) => [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => JSON.parse(m[2]));

describe("client tools", () => {
  it("a continuation that could not start keeps its results and says so; a stop then saves them without a model call", async () => {
    const id = await createConversation();
    const paused = await turn(id, `@tool get_weather {"city":"Paris"}`);
    const [call] = paused.json.requires_action!.calls;
    // The continuation's first read fails (a storage blip) before anything of it is saved.
    await inConversation(id, (i) => {
      const cache = i.cache as unknown as { promptContext: (...a: unknown[]) => Promise<unknown> };
      const real = cache.promptContext.bind(i.cache);
      let calls = 0;
      cache.promptContext = async (...a) => {
        if (calls++ === 0) throw new Error("injected: a storage blip");
        return real(...a);
      };
    });
    const failed = await post(id, [{ tool_use_id: call.id, content: "fine, 21 C" }]);
    expect(failed.status).toBe(502);
    expect(failed.json.error?.message).toMatch(/results posted are kept/);
    const stopped = await api("POST", `/v1/conversations/${id}/stop`, { turnId: paused.json.turnId });
    expect(stopped.json).toEqual({ turnId: paused.json.turnId, stopped: true });
    const t = await transcript(id);
    expect(t.filter((m) => m.role === "assistant")).toHaveLength(1);
    expect(resultText(ofType(t.at(-1)!.content[0], "tool_result"))).toBe("fine, 21 C");
    expect((await turn(id, "and now?")).status).toBe(200);
  });

  it("leave at most 64 calls of a step to the client, answering the rest at once, so the step can be answered", async () => {
    const id = await createConversation();
    const calls = Array.from({ length: 66 }, (_, i) => `@tool get_weather {"city":"c${i}"}`).join("\n");
    const paused = await turn(id, calls);
    expect(paused.json.stop_reason).toBe("requires_action");
    const pending = paused.json.requires_action!.calls;
    expect(pending).toHaveLength(64);
    const answered = await post(
      id,
      pending.map((c) => ({ tool_use_id: c.id, content: "fine" })),
    );
    expect(answered.status, answered.text).toBe(200);
    const results = (await transcript(id)).flatMap((m) => m.content.filter((b) => b.type === "tool_result"));
    expect(results).toHaveLength(66);
    expect(results.filter((b) => ofType(b, "tool_result").is_error).map((b) => resultText(b))).toEqual([
      TOO_MANY_CLIENT_CALLS,
      TOO_MANY_CLIENT_CALLS,
    ]);
    // A client streaming the turn hears each call answered at once as answered.
    const other = await createConversation();
    const streamed = sse(
      (
        await api(
          "POST",
          `/v1/conversations/${other}/messages`,
          { content: calls, tools: [weather] },
          {
            headers: { accept: "text/event-stream" },
          },
        )
      ).text,
    );
    const pendingIds = new Set(
      streamed.find((e) => e.type === "requires_action").calls.map((c: { id: string }) => c.id),
    );
    const used = streamed.filter((e) => e.type === "tool_use").map((e) => e.id);
    const answeredNow = streamed.filter((e) => e.type === "tool_result").map((e) => e.tool_use_id);
    expect(used).toHaveLength(66);
    expect(used.filter((u) => !pendingIds.has(u))).toEqual(answeredNow);
  });

  it("take the results of a regenerated paused turn whose call has an earlier call's id", async () => {
    const id = await createConversation();
    const first = await turn(id, `@tool get_weather {"city":"Rome"}`);
    const [call] = first.json.requires_action!.calls;
    expect((await post(id, [{ tool_use_id: call.id, content: "warm" }])).status).toBe(200);
    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true, tools: [weather] });
    expect(again.json.stop_reason).toBe("requires_action");
    const [repeat] = again.json.requires_action!.calls;
    const answered = await post(id, [{ tool_use_id: repeat.id, content: "cold" }]);
    expect(answered.status, answered.text).toBe(200);
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
  });

  it("pause the turn on a call and resume the same turn with the client's result, across an eviction", async () => {
    const id = await createConversation();
    const paused = await turn(id, `@tool get_weather {"city":"Paris"}`);
    expect(paused.status).toBe(200);
    expect(paused.json.stop_reason).toBe("requires_action");
    const [call] = paused.json.requires_action!.calls;
    expect(call).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
    expect(paused.json.requires_action!.turnId).toBe(paused.json.turnId);
    // The tool_use is saved; its answer is not, until the client's result is in.
    const saved = await transcript(id);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(saved[1].content.filter((b) => b.type === "tool_use").map((b) => b.id)).toEqual([call.id]);

    // A new turn while it waits is refused, naming the pending call.
    const busy = await api("POST", `/v1/conversations/${id}/messages`, { content: "hello?" });
    expect(busy.status).toBe(409);
    expect(busy.json.error).toMatchObject({ type: "turn_paused" });
    // Not a second's wait: the turn waits for its client, so no Retry-After invites polling.
    expect(busy.headers.get("retry-after")).toBeNull();
    expect(busy.json.error?.message).toContain(call.id);

    await evictDurableObject(stubOf(id));
    // A client that lost the answer finds the pending calls on the conversation.
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toEqual(paused.json.requires_action);

    const unknown = await post(id, [{ tool_use_id: "toolu_nope", content: "x" }]);
    expect(unknown.status).toBe(400);
    expect(unknown.json.error?.message).toContain("toolu_nope");
    expect(await transcript(id)).toHaveLength(2);

    const resumed = await post(id, [{ tool_use_id: call.id, content: "sunny, 24 C" }]);
    expect(resumed.status).toBe(200);
    expect(resumed.json.turnId).toBe(paused.json.turnId);
    expect(resumed.json.stop_reason).toBe("end_turn");
    expect(resumed.json.messages[0].content).toEqual([
      { type: "tool_result", tool_use_id: call.id, content: "sunny, 24 C" },
    ]);
    const all = await transcript(id);
    expect(all.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);

    // The resumed request still carried the turn's own tool; the system prompt never names it.
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    // The snapshot is the request as sent: a Messages API request.
    const last = (await api("GET", `/v1/conversations/${id}/prompts/${snaps[0].id}`)).json as unknown as ModelRequest;
    expect(last.tools.map((t) => t.name)).toContain("get_weather");
    expect(last.tools.find((t) => t.name === "get_weather")!.input_schema).toEqual(weather.input_schema);
    expect(JSON.stringify(last.system)).not.toContain("get_weather");
    // A later turn does not carry it.
    expect((await api("GET", `/v1/conversations/${id}/replay`)).json.tools.map((t) => t.name)).not.toContain(
      "get_weather",
    );

    const again = await post(id, [{ tool_use_id: call.id, content: "again" }]);
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({ type: "tool_results_conflict" });
    expect(again.json.error?.message).toContain(call.id);
    expect(await transcript(id)).toHaveLength(4);
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "next" })).status).toBe(200);
  });

  it("accept one of two concurrent posts for the same calls on a cold object: the other is a 409 and the saved results are the winner's", async () => {
    const id = await createConversation();
    for (let round = 0; round < 5; round++) {
      const paused = await turn(id, `@tool get_weather {"city":"Turin ${round}"}`);
      expect(paused.json.stop_reason).toBe("requires_action");
      const [call] = paused.json.requires_action!.calls;
      const before = (await transcript(id)).length;
      await evictDurableObject(stubOf(id));
      const answers = ["from A", "from B"].map((content) => post(id, [{ tool_use_id: call.id, content }]));
      const [a, b] = await Promise.all(answers);
      const statuses = [a.status, b.status].sort();
      expect(statuses, `round ${round}: ${a.text} | ${b.text}`).toEqual([200, 409]);
      const [winner, loser] = a.status === 200 ? [a, b] : [b, a];
      expect(loser.json.error).toMatchObject({ type: "tool_results_conflict" });
      expect(loser.json.error?.message).toContain(call.id);
      expect(winner.json.turnId).toBe(paused.json.turnId);
      const content = winner === a ? "from A" : "from B";
      expect(winner.json.messages[0].content).toEqual([{ type: "tool_result", tool_use_id: call.id, content }]);
      const all = await transcript(id);
      const saved = all.filter((m) => m.content.some((x) => x.type === "tool_result" && x.tool_use_id === call.id));
      expect(saved.map((m) => m.content)).toEqual([[{ type: "tool_result", tool_use_id: call.id, content }]]);
      expect(all).toHaveLength(before + 2);
    }
  });

  it("run the step's server calls at once and save every result of the step in call order, once all are in", async () => {
    const id = await createConversation();
    const paused = await turn(
      id,
      `@tool read_clock {}\n@tool memory_search {"query":"anything"}\n@tool get_weather {"city":"Oslo"}`,
      [weather, clock],
    );
    expect(paused.json.stop_reason).toBe("requires_action");
    const calls = paused.json.requires_action!.calls;
    expect(calls.map((c) => c.name)).toEqual(["read_clock", "get_weather"]);

    const partial = await post(id, [{ tool_use_id: calls[0].id, content: "12:00" }]);
    expect(partial.status).toBe(400);
    expect(partial.json.error?.message).toContain(calls[1].id);
    expect(await transcript(id)).toHaveLength(2);

    const twice = await post(id, [
      { tool_use_id: calls[0].id, content: "a" },
      { tool_use_id: calls[0].id, content: "b" },
    ]);
    expect(twice.status).toBe(400);

    const done = await post(id, [
      { tool_use_id: calls[1].id, content: [{ type: "text", text: "rain" }], is_error: false },
      { tool_use_id: calls[0].id, content: "clock broken", is_error: true },
    ]);
    expect(done.status).toBe(200);
    const results = done.json.messages[0].content;
    expect(results.map((r) => r.tool_use_id)).toEqual([calls[0].id, expect.stringMatching(/.+/), calls[1].id]);
    expect(results[0]).toMatchObject({ content: "clock broken", is_error: true });
    expect(results[1].is_error).toBeUndefined();
    expect(results[2]).toMatchObject({ content: [{ type: "text", text: "rain" }] });
  });

  it("end a turn whose results never come with interrupted-call results when its wait runs out", async () => {
    const id = await createConversation({ clientToolTimeoutSeconds: 1 });
    const paused = await turn(id, `@tool get_weather {"city":"Rome"}`);
    const [call] = paused.json.requires_action!.calls;
    expect(Date.parse(paused.json.requires_action!.expiresAt)).toBeGreaterThan(Date.now());
    await evictDurableObject(stubOf(id));
    await new Promise((r) => setTimeout(r, 1_100));
    // The alarm may already have fired on its own; if not, it runs now. Without one, nothing ends the wait.
    await runDurableObjectAlarm(stubOf(id));
    await eventually(async () => (await transcript(id)).length === 3);
    const all = await transcript(id);
    expect(all).toHaveLength(3);
    expect(all[2].content).toEqual([
      { type: "tool_result", tool_use_id: call.id, content: INTERRUPTED_TOOL_RESULT, is_error: true },
    ]);
    const late = await post(id, [{ tool_use_id: call.id, content: "too late" }]);
    expect(late.status).toBe(409);
    expect(await transcript(id)).toHaveLength(3);
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "carry on" })).status).toBe(200);
  });

  it("end a paused turn on a stop (POST /stop or the stop frame): its calls closed as interrupted, new turns taken at once", async () => {
    const id = await createConversation();
    // POST /stop naming the paused turn.
    const paused = await turn(id, `@tool get_weather {"city":"Oslo"}`);
    const [call] = paused.json.requires_action!.calls;
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "next" })).json.error?.type).toBe(
      "turn_paused",
    );
    const stop = await api("POST", `/v1/conversations/${id}/stop`, { turnId: paused.json.turnId });
    expect(stop.json).toEqual({ turnId: paused.json.turnId, stopped: true });
    expect((await transcript(id))[2].content).toEqual([
      { type: "tool_result", tool_use_id: call.id, content: INTERRUPTED_TOOL_RESULT, is_error: true },
    ]);
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
    // A repeated stop answers as the first did; late results are refused, nothing saved.
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId: paused.json.turnId })).json.stopped).toBe(true);
    expect((await post(id, [{ tool_use_id: call.id, content: "too late" }])).status).toBe(409);
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "carry on" })).status).toBe(200);
    // The stop frame naming no turn: the paused one ends, every socket hears turn_end "interrupted".
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    sock.ws!.send(JSON.stringify({ type: "send", content: `@tool get_weather {"city":"Lima"}`, tools: [weather] }));
    const action = await sock.next((e) => e.type === "requires_action");
    sock.ws!.send(JSON.stringify({ type: "stop" }));
    await sock.next((e) => e.type === "turn_end" && e.turnId === action.turnId && e.stop_reason === "interrupted");
    expect(await sock.next((e) => e.type === "stopped")).toMatchObject({ turnId: action.turnId, stopped: true });
    sock.ws!.close();
    // A stop naming another turn leaves a paused one waiting.
    const again = await turn(id, `@tool get_weather {"city":"Cusco"}`);
    expect(
      (await api("POST", `/v1/conversations/${id}/stop`, { turnId: "turn_01ARZ3NDEKTSV4RRFFQ69G5FAV" })).json,
    ).toEqual({
      turnId: "turn_01ARZ3NDEKTSV4RRFFQ69G5FAV",
      stopped: false,
    });
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toMatchObject({
      turnId: again.json.turnId,
    });
  });

  it("end a turn whose pause could not be stored with error and turn_end; the next turn answers its call as interrupted", async () => {
    const id = await createConversation();
    await inConversation(id, (instance) => {
      instance.paused.pause = async () => {
        throw new Error("injected: the paused turn could not be stored");
      };
    });
    const r = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: `@tool get_weather {"city":"Quito"}`, tools: [weather] },
      { headers: { accept: "text/event-stream" } },
    );
    const events = sse(r.text);
    expect(events.map((e) => e.type)).not.toContain("requires_action");
    expect(events.at(-2)).toMatchObject({ type: "error", error: { type: "storage_error" } });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "error" });
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
    // Nothing waits: the next turn is taken, and its request answers the stored call as interrupted.
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "go on" })).status).toBe(200);
    const replay = JSON.stringify((await api("GET", `/v1/conversations/${id}/replay`)).json.messages);
    expect(replay).toContain(INTERRUPTED_TOOL_RESULT);
  });

  it("answer over SSE: requires_action then turn_end, and the resumed turn streams under the same turnId", async () => {
    const id = await createConversation();
    const events = sse(
      (await turn(id, `@tool get_weather {"city":"Lima"}`, [weather], { accept: "text/event-stream" })).text,
    );
    const types = events.map((e) => e.type);
    expect(types.slice(-2)).toEqual(["requires_action", "turn_end"]);
    expect(events.at(-1).stop_reason).toBe("requires_action");
    const action = events.at(-2);
    const resumed = sse(
      (await post(id, [{ tool_use_id: action.calls[0].id, content: "fog" }], { accept: "text/event-stream" })).text,
    );
    expect(resumed[0]).toEqual({ type: "turn_start", turnId: action.turnId });
    expect(resumed.at(-1)).toMatchObject({ type: "turn_end", turnId: action.turnId, stop_reason: "end_turn" });
  });

  it("refuse bad tool definitions and results with a 400 naming the field, before anything runs", async () => {
    const id = await createConversation();
    const bad: [unknown, string][] = [
      [[{ ...weather, name: "no spaces" }], "tools.0.name"],
      [[{ ...weather, name: "memory_search" }], "memory_search"],
      [[{ ...weather, input_schema: { type: "string" } }], "tools.0.input_schema"],
      [[weather, weather], "defined twice"],
      [[{ ...weather, input_schema: { type: "object", description: "x".repeat(20_000) } }], "input_schema"],
    ];
    for (const [tools, named] of bad) {
      const r = await api("POST", `/v1/conversations/${id}/messages`, { content: "x", tools });
      expect(r.status, JSON.stringify(tools).slice(0, 80)).toBe(400);
      expect(r.json.error?.message).toContain(named);
    }
    for (const body of [
      {},
      { results: [] },
      { results: [{ tool_use_id: "a" }] },
      { results: [{ tool_use_id: "a", content: 5 }] },
    ]) {
      const r = await api("POST", `/v1/conversations/${id}/tool-results`, body);
      expect(r.status).toBe(400);
    }
    expect(await transcript(id)).toHaveLength(0);
  });

  it("pause and resume over the websocket: requires_action and a tool_results frame", async () => {
    const id = await createConversation();
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    sock.ws!.send(JSON.stringify({ type: "send", content: "x", tools: [{ ...weather, name: "memory_get" }] }));
    expect((await sock.next((e) => e.type === "error")).error.message).toContain(
      "memory_get is a built-in or server tool's name",
    );
    // A server tool's name too: a conversation with web search carries the API's own web_search.
    const http = await api("POST", `/v1/conversations/${id}/messages`, {
      content: "x",
      tools: [{ ...weather, name: "web_search" }],
    });
    expect(http.status).toBe(400);
    expect(http.json.error?.message).toContain("tools.0.name: web_search is a built-in or server tool's name");
    sock.ws!.send(JSON.stringify({ type: "send", content: `@tool get_weather {"city":"Kyiv"}`, tools: [weather] }));
    const action = await sock.next((e) => e.type === "requires_action");
    expect(action.calls[0]).toMatchObject({ name: "get_weather", input: { city: "Kyiv" } });
    const r = { json: { turnId: action.turnId } };
    sock.ws!.send(JSON.stringify({ type: "send", content: "meanwhile" }));
    expect(
      ofType(await sock.next((e) => e.type === "error" && e.error.type === "turn_paused"), "error").error.message,
    ).toContain(action.calls[0].id);
    sock.ws!.send(
      JSON.stringify({ type: "tool_results", results: [{ tool_use_id: action.calls[0].id, content: "snow" }] }),
    );
    const end = ofType(
      await sock.next((e) => e.type === "turn_end" && e.turnId === action.turnId && e.stop_reason === "end_turn"),
      "turn_end",
    );
    expect(ofType(end, "turn_end").turnId).toBe(r.json.turnId);
    sock.ws!.close();
    const all = await transcript(id);
    expect(all[2].content).toEqual([{ type: "tool_result", tool_use_id: action.calls[0].id, content: "snow" }]);
    expect(all.map((m) => textOfUser(m)).join("\n")).not.toContain("meanwhile");
  });

  it("are answered with an error result inside a sub-agent, which has no client to wait for", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: `@tool tool_activate {"name":"agent_delegate"}` });
    const r = await turn(id, `@tool agent_delegate ${JSON.stringify({ name: "w", task: "@tool get_weather {}" })}`);
    expect(r.json.stop_reason).not.toBe("requires_action");
    const all = await transcript(id);
    const sub = all
      .flatMap((m) => m.content)
      .find(
        (b) =>
          b.type === "tool_result" && String(b.content).includes("get_weather runs on the client; only the main agent"),
      );
    expect(sub).toMatchObject({ is_error: true });
  });

  it("through the typed client: turn() ends on requires_action, toolResults() streams the resumed turn", async () => {
    const client = new Client({
      baseUrl: "http://chat.test",
      key: DEV_KEY,
      fetch: (input, init) => worker().fetch(new Request(input as string, init)),
    });
    const id = await createConversation();
    const events: TurnEvent[] = [];
    for await (const e of client.turn(id, { content: `@tool get_weather {"city":"Quito"}`, tools: [weather] }))
      events.push(e);
    const action = ofType(
      events.find((e) => e.type === "requires_action"),
      "requires_action",
    );
    expect(action.calls[0].name).toBe("get_weather");
    const resumed: TurnEvent[] = [];
    for await (const e of client.toolResults(id, [{ tool_use_id: action.calls[0].id, content: "warm" }]))
      resumed.push(e);
    expect(resumed.at(-1)).toMatchObject({ type: "turn_end", turnId: action.turnId, stop_reason: "end_turn" });
  });

  it("take an Idempotency-Key: a refused post frees it, a retry of one that went through gets its outcome again", async () => {
    const id = await createConversation();
    const [call] = (await turn(id, `@tool get_weather {"city":"Baku"}`)).json.requires_action!.calls;
    const key = { "idempotency-key": "results-1" };
    expect((await post(id, [{ tool_use_id: "toolu_wrong", content: "x" }], key)).status).toBe(400);
    const first = await post(id, [{ tool_use_id: call.id, content: "windy" }], key);
    expect(first.status).toBe(200);
    const retry = await post(id, [{ tool_use_id: call.id, content: "windy" }], key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json.turnId).toBe(first.json.turnId);
    expect(retry.json.messages.map((m) => m.id)).toEqual(first.json.messages.map((m) => m.id));
    expect(await transcript(id)).toHaveLength(4);
    expect((await post(id, [{ tool_use_id: call.id, content: "calm" }], key)).status).toBe(422);
  });

  it("keep the step's results right after its tool_use: a note uploaded during the pause follows them, an import waits", async () => {
    const id = await createConversation();
    const [call] = (await turn(id, `@tool get_weather {"city":"Nuuk"}`)).json.requires_action!.calls;
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=notes.txt`, "line one\nline two", {
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    const imported = await api("POST", `/v1/conversations/${id}/import`, {
      messages: [
        { role: "user", text: "hi" },
        { role: "assistant", text: "hello" },
      ],
    });
    expect(imported.status).toBe(409);
    expect(imported.json.error?.message).toContain(call.id);
    expect(await transcript(id)).toHaveLength(2);
    expect((await post(id, [{ tool_use_id: call.id, content: "ice" }])).status).toBe(200);
    const all = await transcript(id);
    expect(all[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: call.id });
    expect(ofType(all[3].content[0], "text").text).toContain("notes.txt");
    expect(all.at(-1)!.role).toBe("assistant");
  });

  it("have their results stubbed like any other once stale, the stub naming the call that returns the bytes", async () => {
    const id = await createConversation({ stubBatchChars: 0 });
    const [call] = (await turn(id, `@tool get_weather {"city":"Lagos"}`)).json.requires_action!.calls;
    // Larger than an ordinary body may be: results are allowed a turn's size.
    const report = "hot and humid. ".repeat(40_000);
    expect((await post(id, [{ tool_use_id: call.id, content: report }])).status).toBe(200);
    for (const text of ["small talk one", "small talk two", "small talk three"])
      expect((await api("POST", `/v1/conversations/${id}/messages`, { content: text })).status).toBe(200);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const stub = replay.messages
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .find((b) => b.type === "tool_result" && b.tool_use_id === call.id);
    const stubText = resultText(ofType(stub as ContentBlock | undefined, "tool_result"));
    expect(stubText.length).toBeLessThan(2_000);
    expect(stubText).toMatch(/conversation_read \{/);
    expect(replay.estimate.stubbedResults).toBe(1);
  });

  it("resume by alarm when results were accepted but a restart came before they were saved", async () => {
    const id = await createConversation();
    const [call] = (await turn(id, `@tool get_weather {"city":"Hanoi"}`)).json.requires_action!.calls;
    // Accepted and stored, as POST /tool-results does, but the object dies before the resume runs.
    const stub = stubOf(id) as unknown as DurableObjectStub;
    const acceptOnly = async (instance: ConversationInternals) =>
      void (await instance.paused.accept([{ tool_use_id: call.id, content: "monsoon" }], toToolResultBlock));
    await inConversation(stub, acceptOnly);
    await evictDurableObject(stubOf(id));
    expect(await transcript(id)).toHaveLength(2);
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    await eventually(async () => (await transcript(id)).length === 4);
    const all = await transcript(id);
    expect(all[2].content).toEqual([{ type: "tool_result", tool_use_id: call.id, content: "monsoon" }]);
    expect((await post(id, [{ tool_use_id: call.id, content: "again" }])).status).toBe(409);
  });

  it("never save a step's results twice when a restart came after they were saved but before the pause was cleared", async () => {
    const id = await createConversation();
    const [call] = (await turn(id, `@tool get_weather {"city":"Lima"}`)).json.requires_action!.calls;
    const stub = stubOf(id) as unknown as DurableObjectStub;
    // Accepted, and the step's results saved, as a resume does; the object dies before clearing the pause.
    const savedNotCleared = async (instance: ConversationInternals) => {
      await instance.paused.accept([{ tool_use_id: call.id, content: "fog" }], toToolResultBlock);
      await instance.record.append([
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "fog" }] },
      ]);
    };
    await inConversation(stub, savedNotCleared);
    await evictDurableObject(stubOf(id));
    expect(await transcript(id)).toHaveLength(3);
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    await eventually(async () => (await api("GET", `/v1/conversations/${id}`)).json.requiresAction === undefined);
    const all = await transcript(id);
    expect(
      all.filter((m) => m.content.some((b) => b.type === "tool_result" && b.tool_use_id === call.id)),
    ).toHaveLength(1);
    // The conversation goes on from the saved results.
    const next = await api("POST", `/v1/conversations/${id}/messages`, { content: "and tomorrow?" });
    expect(next.status).toBe(200);
  });

  it("keep the wait's alarm set once indexing has caught up (the outbox would otherwise clear it)", async () => {
    const id = await createConversation();
    const paused = await turn(id, `@tool get_weather {"city":"zanzibar-alarm-check"}`);
    await eventually(async () => (await api("GET", `/v1/search?q=zanzibar&conversation=${id}`)).json.data.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    const alarmAt = await inConversation(id, (_i, state) => state.storage.getAlarm());
    expect(alarmAt).toBe(Date.parse(paused.json.requires_action!.expiresAt));
  });

  it("keep a large paused turn in chunks under the storage value limit, whole across a reload", async () => {
    const id = await createConversation();
    const paused = await turn(id, `@tool get_weather {"city":"Oslo"}`);
    expect(paused.json.stop_reason).toBe("requires_action");
    const inObject = runInDurableObject as unknown as <T>(
      s: unknown,
      f: (i: unknown, st: DurableObjectState) => Promise<T>,
    ) => Promise<T>;
    const out = await inObject(stubOf(id), async (_i, state) => {
      const stored = await new PausedTurns(state).get();
      // 3 MB of answers (a post may carry 12 MiB): more than one storage value may hold (2 MB).
      const big = {
        ...stored!,
        answers: [
          { type: "tool_result" as const, tool_use_id: stored!.step.pending[0].id, content: "w".repeat(3_000_000) },
        ],
      };
      await new PausedTurns(state).pause(big);
      const chunks = [...(await state.storage.list<string>({ prefix: "paused-turn:" })).values()];
      const reread = await new PausedTurns(state).get();
      // Put the real pause back, so the conversation is left as it was.
      await new PausedTurns(state).pause(stored!);
      const after = [...(await state.storage.list<string>({ prefix: "paused-turn:" })).values()];
      return {
        chunks: chunks.map((c) => c.length),
        answer: (reread!.answers![0].content as string).length,
        after: after.length,
      };
    });
    expect(out.chunks.length).toBeGreaterThanOrEqual(7);
    expect(Math.max(...out.chunks)).toBeLessThanOrEqual(500_000);
    expect(out.answer).toBe(3_000_000);
    // Chunks past the smaller turn's count are removed.
    expect(out.after).toBe(1);
  });

  it("resume a paused turn whose tool name a tenant registered while it waited: the turn's own tool wins", async () => {
    const id = await createConversation();
    const paused = await turn(id, `@tool get_weather {"city":"Rome"}`);
    expect(paused.json.stop_reason).toBe("requires_action");
    const reg = await api("POST", "/v1/tools", {
      kind: "client",
      name: "get_weather",
      description: "A tenant tool of the same name.",
      inputSchema: { type: "object" },
    });
    expect(reg.status).toBe(201);
    try {
      // A fresh object reads the tenant's tools anew, so the new name is seen at the resume.
      await evictDurableObject(stubOf(id));
      const resumed = await post(id, [
        { tool_use_id: paused.json.requires_action!.calls[0].id, content: "warm, 28 C" },
      ]);
      expect(resumed.status).toBe(200);
      expect(resumed.json.stop_reason).toBe("end_turn");
      expect(resumed.json.turnId).toBe(paused.json.turnId);
      expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
    } finally {
      await api("DELETE", `/v1/tools/${reg.json.id}`);
    }
  });

  it("a client tool registered on the tenant (/v1/tools, kind client) is found, activated and pauses the turn like a turn's own", async () => {
    const name = `pick_color_${Date.now()}`;
    const reg = await api("POST", "/v1/tools", {
      kind: "client",
      name,
      description: "Asks the person to pick a color.",
      inputSchema: { type: "object", properties: { palette: { type: "string" } } },
    });
    expect(reg.status).toBe(201);
    try {
      const id = await createConversation();
      const paused = await api("POST", `/v1/conversations/${id}/messages`, {
        content: `@tool tool_activate {"name":"${name}"}\n@tool ${name} {"palette":"warm"}`,
      });
      expect(paused.status).toBe(200);
      expect(paused.json.stop_reason).toBe("requires_action");
      expect(paused.json.requires_action!.calls).toEqual([
        expect.objectContaining({ name, input: { palette: "warm" } }),
      ]);
      const resumed = await post(id, [{ tool_use_id: paused.json.requires_action!.calls[0].id, content: "amber" }]);
      expect(resumed.status).toBe(200);
      expect(resumed.json.turnId).toBe(paused.json.turnId);
    } finally {
      await api("DELETE", `/v1/tools/${reg.json.id}`);
    }
  });
});

const textOfUser = (m: StoredMessage) =>
  m.role === "user" ? m.content.map((b) => (b.type === "text" ? b.text : "")).join("") : "";
