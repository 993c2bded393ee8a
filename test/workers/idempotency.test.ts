// Idempotency-Key on turns: a retry gets the first outcome (same status, same body), never a
// second turn — after a failure, after success, concurrently, over the websocket, and across an
// eviction or a crash of the conversation's object.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  api,
  connectSocket,
  createConversation,
  eventually,
  newTenant,
  transcript,
  worker,
  inConversation,
} from "./helpers";
import { ofType } from "../blocks";
import type { TurnEvent } from "../../core/events";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const keyed = (id: string, content: unknown, key: string, headers: Record<string, string> = {}) =>
  api("POST", `/v1/conversations/${id}/messages`, { content }, { headers: { "idempotency-key": key, ...headers } });
const newKey = () => `turn-${crypto.randomUUID()}`;

async function sseEvents(
  id: string,
  content: string,
  key: string,
): Promise<{ status: number; replayed: string | null; events: TurnEvent[] }> {
  const res: Response = await worker().fetch(
    new Request(`http://chat.test/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: {
        authorization: "Bearer dev-local-key",
        "content-type": "application/json",
        accept: "text/event-stream",
        "idempotency-key": key,
      },
      body: JSON.stringify({ content }),
    }),
  );
  const text = await res.text();
  const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as TurnEvent);
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), events };
}

describe("Idempotency-Key on POST /messages", () => {
  it("answers a retry after a failed turn with the same 502 and body, across an eviction, with one user message saved", async () => {
    const id = await createConversation();
    const key = newKey();
    const first = await keyed(id, "please fail\n@model-error 500", key);
    expect(first.status).toBe(502);
    expect(first.json.error).toMatchObject({ type: "model_error", status: 500 });
    expect(first.json.messages).toHaveLength(1);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    // The ledger is storage, not memory: a fresh object answers the retry.
    await evictDurableObject(stubOf(id));
    const retry = await keyed(id, "please fail\n@model-error 500", key);
    expect(retry.status).toBe(502);
    expect(retry.json).toEqual(first.json);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user"]);
  });

  it("answers a retry after success with the same body and saves nothing; another key runs a new turn", async () => {
    const id = await createConversation();
    const key = newKey();
    const first = await keyed(id, "@reply-chars 300", key);
    expect(first.status).toBe(200);
    expect(first.json.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // The same request spelled differently (blocks instead of a string) is the same request.
    const retry = await keyed(id, [{ text: "@reply-chars 300", type: "text" }], key);
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual(first.json);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await transcript(id)).toHaveLength(2);
    const other = await keyed(id, "@reply-chars 300", newKey());
    expect(other.status).toBe(200);
    expect(other.json.turnId).not.toBe(first.json.turnId);
    expect(await transcript(id)).toHaveLength(4);
  });

  it("runs one turn for concurrent requests with one key; the others get 409 idempotency_in_progress", async () => {
    const id = await createConversation();
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 4 }, () => keyed(id, "@reply-chars 4000", key)));
    const ran = answers.filter((a) => a.status === 200 && a.headers.get("idempotent-replayed") === null);
    expect(ran).toHaveLength(1);
    for (const a of answers.filter((a) => a !== ran[0])) {
      // A request that arrived after the turn ended is a replay of it; none runs its own.
      if (a.status === 409) {
        expect(a.json.error?.type).toBe("idempotency_in_progress");
        expect(a.headers.get("retry-after")).toBe("1");
      } else expect(a.json).toEqual(ran[0].json);
    }
    expect(answers.some((a) => a.status === 409)).toBe(true);
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant"]);
    const after = await keyed(id, "@reply-chars 4000", key);
    expect(after.json).toEqual(ran[0].json);
  });

  it("answers a retry of a turn that paused on client tools with its first outcome, requires_action included, not turn_paused", async () => {
    const id = await createConversation();
    const key = newKey();
    const content = `@tool get_weather {"city":"Bergen"}`;
    const tools = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
    const paused = (k: string, headers: Record<string, string> = {}) =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content, tools },
        { headers: { "idempotency-key": k, ...headers } },
      );
    const first = await paused(key);
    expect(first.status).toBe(200);
    expect(first.json.stop_reason).toBe("requires_action");
    const retry = await paused(key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json).toEqual(first.json);
    const sse = await paused(key, { accept: "text/event-stream" });
    const events = [...sse.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as TurnEvent);
    expect(events.map((e) => e.type)).toEqual(["turn_start", "message", "message", "requires_action", "turn_end"]);
    expect(events[3]).toEqual({ type: "requires_action", ...first.json.requires_action });
    // A new request while the turn waits is still refused, and its key is not kept.
    const other = newKey();
    const busy = await paused(other);
    expect(busy.status).toBe(409);
    expect(busy.json.error?.type).toBe("turn_paused");
    expect(await transcript(id)).toHaveLength(2);
    const [call] = first.json.requires_action!.calls;
    expect(
      (
        await api("POST", `/v1/conversations/${id}/tool-results`, {
          results: [{ tool_use_id: call.id, content: "rain" }],
        })
      ).status,
    ).toBe(200);
    // Once the turn went on, the retry still answers what the first request got.
    expect((await paused(key)).json).toEqual(first.json);
    const ran = await paused(other);
    expect(ran.headers.get("idempotent-replayed")).toBeNull();
    expect(ran.json.stop_reason).toBe("requires_action");
  });

  it("answers a retry of a refused turn with its refusal and the fallback's model change, as first sent", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" });
    const key = newKey();
    const ask = "ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5";
    const first = await keyed(id, ask, key);
    expect(first.status).toBe(200);
    expect(first.json.refusal).toMatchObject({ category: "frontier_llm", fallbackModel: "claude-opus-5-5" });
    expect(first.json.model_changes).toEqual([
      { from: "claude-sonnet-5-5", to: "claude-opus-5-5", reason: "refusal_fallback" },
    ]);
    await evictDurableObject(stubOf(id));
    const retry = await keyed(id, ask, key);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json).toEqual(first.json);
    expect(await transcript(id)).toHaveLength(first.json.messages.length);
  });

  it("answers a retry of a keyed regenerate with the exchange it superseded, and supersedes nothing more", async () => {
    const id = await createConversation();
    await keyed(id, "Name a river.\n@reply-chars 120", newKey());
    const key = newKey();
    const regenerate = () =>
      api("POST", `/v1/conversations/${id}/messages`, { regenerate: true }, { headers: { "idempotency-key": key } });
    const first = await regenerate();
    expect(first.status).toBe(200);
    expect(first.json.superseded).toMatchObject({ fromSeq: 1, toSeq: 2 });
    const retry = await regenerate();
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json).toEqual(first.json);
    expect(await transcript(id)).toHaveLength(4);
  });

  it("answers a retry of a turn a later regenerate replaced with its messages marked superseded, as the transcript shows them", async () => {
    const id = await createConversation();
    const key = newKey();
    const first = await keyed(id, "Name a cape.\n@reply-chars 120", key);
    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    const by = again.json.messages[0].id;
    const retry = await keyed(id, "Name a cape.\n@reply-chars 120", key);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json.messages.map((m) => m.id)).toEqual(first.json.messages.map((m) => m.id));
    for (const m of retry.json.messages) expect(m).toMatchObject({ superseded: true, supersededBy: by });
  });

  it("refuses the key with a different body: 422 idempotency_key_reused, nothing written", async () => {
    const id = await createConversation();
    const key = newKey();
    expect((await keyed(id, "the first request", key)).status).toBe(200);
    const before = await transcript(id);
    const reused = await keyed(id, "a different request", key);
    expect(reused.status).toBe(422);
    expect(reused.json.error?.type).toBe("idempotency_key_reused");
    expect(reused.json.error?.message).toMatch(/Idempotency-Key/);
    expect(await transcript(id)).toEqual(before);
  });

  it("refuses the key with the same content but other client tools: they change what the turn may do", async () => {
    const id = await createConversation();
    const key = newKey();
    const tool = (name: string) => ({ name, input_schema: { type: "object", properties: {} } });
    const post = (tools: unknown[]) =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content: "hello there", tools },
        { headers: { "idempotency-key": key } },
      );
    expect((await post([tool("get_weather")])).status).toBe(200);
    const before = await transcript(id);
    const retry = await post([tool("get_weather")]);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    const other = await post([tool("delete_everything")]);
    expect(other.status).toBe(422);
    expect(other.json.error?.type).toBe("idempotency_key_reused");
    expect(await transcript(id)).toEqual(before);
  });

  it("scopes keys to the conversation: the same key on another conversation is a new turn there", async () => {
    const a = await createConversation();
    const b = await createConversation();
    const key = newKey();
    await keyed(a, "hello", key);
    const onB = await keyed(b, "hello", key);
    expect(onB.status).toBe(200);
    expect(onB.headers.get("idempotent-replayed")).toBeNull();
    expect(await transcript(b)).toHaveLength(2);
  });

  it("answers another tenant's key on the conversation like a conversation that does not exist, replaying nothing", async () => {
    const id = await createConversation();
    const key = newKey();
    await keyed(id, "private words", key);
    const keyB = await newTenant();
    const asB = (conv: string) =>
      api(
        "POST",
        `/v1/conversations/${conv}/messages`,
        { content: "private words" },
        { key: keyB, headers: { "idempotency-key": key } },
      );
    const foreign = await asB(id);
    const missing = await asB(`conv_${"0".repeat(26)}`);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual(missing.json);
    expect(await transcript(id)).toHaveLength(2);
  });

  it("refuses malformed keys with a 400 naming the header, before anything runs", async () => {
    const id = await createConversation();
    for (const bad of ["", "k".repeat(256), "tab\there", "caf\u00e9"]) {
      const r = await keyed(id, "never saved", bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.json.error?.type).toBe("invalid_request");
      expect(r.json.error?.message).toMatch(/^Idempotency-Key: /);
    }
    expect((await keyed(id, "saved once", "k".repeat(255))).status).toBe(200);
    expect(await transcript(id)).toHaveLength(2);
  });

  it("replays over SSE as turn_start (replayed), the saved messages, and turn_end", async () => {
    const id = await createConversation();
    const key = newKey();
    const first = await sseEvents(id, `@tool conversation_read {"from_seq":1,"to_seq":1}`, key);
    expect(first.status).toBe(200);
    const saved = first.events.filter((e) => e.type === "message").map((e) => e.message);
    expect(saved.length).toBe(4);
    const retry = await sseEvents(id, `@tool conversation_read {"from_seq":1,"to_seq":1}`, key);
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe("true");
    expect(retry.events.map((e) => e.type)).toEqual([
      "turn_start",
      "message",
      "message",
      "message",
      "message",
      "turn_end",
    ]);
    expect(retry.events[0]).toMatchObject({ turnId: first.events[0].turnId, replayed: true });
    expect(retry.events.filter((e) => e.type === "message").map((e) => e.message)).toEqual(saved);
    const end = (events: TurnEvent[]) => events.find((e) => e.type === "turn_end");
    expect(end(retry.events)).toEqual(end(first.events));
    expect(await transcript(id)).toEqual(saved);
  });

  it("reports a turn its object died in as turn_interrupted with what it saved, and never runs it again", async () => {
    const id = await createConversation();
    const key = newKey();
    // The model fails and the SDK backs off before retrying: the user message is saved by then.
    const dying = keyed(id, "crash while I wait\n@model-error 500", key);
    await eventually(async () => (await transcript(id)).length === 1);
    await runInDurableObject(stubOf(id), (_i, state) => state.abort("injected crash")).catch(() => {});
    await dying.catch(() => {});
    const retry = await keyed(id, "crash while I wait\n@model-error 500", key);
    expect(retry.status).toBe(502);
    expect(retry.json.error?.type).toBe("turn_interrupted");
    expect(retry.json.messages.map((m) => m.seq)).toEqual([1]);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await transcript(id)).toHaveLength(1);
  });

  it("answers the first caller of a turn its object died in with 502 turn_interrupted (JSON), or an error and turn_end (SSE)", async () => {
    const id = await createConversation();
    const dying = api("POST", `/v1/conversations/${id}/messages`, { content: "crash while I wait\n@model-error 500" });
    await eventually(async () => (await transcript(id)).length === 1);
    await runInDurableObject(stubOf(id), (_i, state) => state.abort("injected crash")).catch(() => {});
    const first = await dying;
    expect(first.status).toBe(502);
    expect(first.json.error?.type).toBe("turn_interrupted");
    expect(first.json.messages.map((m) => m.seq)).toEqual([1]);

    const other = await createConversation();
    const streaming = api(
      "POST",
      `/v1/conversations/${other}/messages`,
      { content: "crash while I wait\n@model-error 500" },
      { headers: { accept: "text/event-stream" } },
    );
    await eventually(async () => (await transcript(other)).length === 1);
    await runInDurableObject(stubOf(other), (_i, state) => state.abort("injected crash")).catch(() => {});
    const events = [...(await streaming).text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => JSON.parse(m[2]));
    expect(events.map((e) => e.type).slice(-2)).toEqual(["error", "turn_end"]);
    expect(events.at(-2).error.type).toBe("turn_interrupted");
    expect(events.at(-1)).toMatchObject({ stop_reason: "error", turnId: events[0].turnId });
  });

  it("frees the key of a turn that saved nothing, so a retry with it runs", async () => {
    const project = await api("POST", "/v1/projects", { name: `p-${crypto.randomUUID().slice(0, 6)}` });
    const id = (await api("POST", "/v1/conversations", { title: "p", projectId: project.json.id })).json.id;
    // The project lookup before the turn fails once: the turn is refused before its user message.
    let failures = 1;
    const db = new Proxy(env.DB, {
      get: (target, prop) =>
        prop === "prepare" && failures-- > 0
          ? () => {
              throw new Error("injected D1 failure");
            }
          : (Reflect.get(target, prop) as (...args: unknown[]) => unknown).bind(target),
    });
    await inConversation(stubOf(id), (instance) =>
      Object.defineProperty(instance, "env", {
        value: Object.create(env, { DB: { value: db } }),
        configurable: true,
        writable: true,
      }),
    );
    const key = newKey();
    const refused = await keyed(id, "hello", key);
    expect(refused.status).toBe(502);
    expect(refused.json).toMatchObject({ messages: [], error: { type: "storage_error" } });
    const retry = await keyed(id, "hello", key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await transcript(id)).toHaveLength(2);
  });

  it("runs the turn of a key whose object died before the turn saved anything", async () => {
    const id = await createConversation();
    const key = newKey();
    const { requestFingerprint } = await import("../../core/idempotency-key");
    const fingerprint = await requestFingerprint({ content: [{ type: "text", text: "hello" }] });
    // What a crash between the claim and the user message's write leaves behind.
    await runInDurableObject(stubOf(id), (_i, state) => {
      state.storage.sql.exec(
        `INSERT INTO idempotency_keys (key, fingerprint, status, incarnation, outcome, created_at) VALUES (?, ?, 'running', 'a-dead-object', ?, ?)`,
        key,
        fingerprint,
        JSON.stringify({ turnId: "turn_dead", seqs: [], error: null, end: null }),
        Date.now(),
      );
    });
    await evictDurableObject(stubOf(id));
    const r = await keyed(id, "hello", key);
    expect(r.status).toBe(200);
    expect(r.headers.get("idempotent-replayed")).toBeNull();
    expect((await keyed(id, "hello", key)).json).toEqual(r.json);
    expect(await transcript(id)).toHaveLength(2);
  });

  it("forgets a key after 24 hours", async () => {
    const id = await createConversation();
    const key = newKey();
    await keyed(id, "hello", key);
    await runInDurableObject(stubOf(id), (_i, state) => {
      state.storage.sql.exec(`UPDATE idempotency_keys SET created_at = created_at - ?`, 24 * 60 * 60_000 + 1);
    });
    const again = await keyed(id, "hello", key);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(await transcript(id)).toHaveLength(4);
  });

  it("refuses the header on channel turns rather than ignoring it", async () => {
    const r = await api(
      "POST",
      `/v1/channels/idem-${crypto.randomUUID().slice(0, 8)}/messages`,
      { content: "hi" },
      { headers: { "idempotency-key": newKey() } },
    );
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/^Idempotency-Key: /);
  });
});

describe("idempotencyKey on websocket send frames", () => {
  it("runs one turn for a frame sent twice; a later repeat replays to the sender; HTTP shares the key", async () => {
    const id = await createConversation();
    const key = newKey();
    const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const frame = JSON.stringify({ type: "send", content: "@reply-chars 2000", idempotencyKey: key });
    c.ws!.send(frame);
    c.ws!.send(frame);
    const busy = await c.next((e) => e.type === "error");
    expect(busy).toMatchObject({ idempotencyKey: key, error: { type: "idempotency_in_progress" } });
    const end = await c.next((e) => e.type === "turn_end");
    c.ws!.send(frame);
    const replayStart = ofType(await c.next((e) => e.type === "turn_start" && e.replayed === true), "turn_start");
    expect(replayStart.turnId).toBe(end.turnId);
    await c.next((e) => e.type === "turn_end" && c.events.indexOf(e) > c.events.indexOf(replayStart));
    expect(c.events.filter((e) => e.type === "turn_start" && !e.replayed)).toHaveLength(1);
    c.ws!.send(JSON.stringify({ type: "send", content: "another request", idempotencyKey: key }));
    await c.next((e) => e.type === "error" && e.error.type === "idempotency_key_reused");
    const http = await keyed(id, "@reply-chars 2000", key);
    expect(http.status).toBe(200);
    expect(http.json.turnId).toBe(end.turnId);
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant"]);
    c.ws!.close();
  });

  it("refuses a malformed idempotencyKey with an invalid_request frame and runs nothing", async () => {
    const id = await createConversation();
    const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    c.ws!.send(JSON.stringify({ type: "send", content: "never", idempotencyKey: " padded" }));
    const e = await c.next((e) => e.type === "error");
    expect(e.error).toMatchObject({ type: "invalid_request", message: expect.stringMatching(/^idempotencyKey: /) });
    c.ws!.send(JSON.stringify({ type: "ping" }));
    await c.next((e) => e.type === "pong");
    expect(await transcript(id)).toEqual([]);
    c.ws!.close();
  });
});
