// The platform's routes inside workerd, against the real Durable Object, D1 and R2 bindings.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  api,
  createConversation,
  eventually,
  type Method,
  newTenant,
  send,
  replyText,
  textOf,
  transcript,
  turnMessages,
} from "./helpers";
import { ofType, resultText } from "../blocks";
import { shardCount } from "./cortex-rows";
import { cortexFor } from "../../services/cortex/routing";

describe("auth", () => {
  it("answers /health without auth and refuses /v1 without a key", async () => {
    expect((await api("GET", "/health", undefined, { key: "" })).json).toEqual({ ok: true });
    const r = await api("GET", "/v1/conversations", undefined, { key: "" });
    expect(r.status).toBe(401);
    expect(r.json.error?.type).toBe("authentication_error");
    expect((await api("GET", "/v1/conversations", undefined, { key: "wrong" })).status).toBe(401);
  });

  it("creates tenants only with the admin token, and their keys work", async () => {
    expect((await api("POST", "/v1/admin/tenants", { name: "x" })).status).toBe(401);
    const key = await newTenant();
    expect(key).toMatch(/^ck_/);
    const list = await api("GET", "/v1/conversations", undefined, { key });
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual([]);
  });

  it("stores keys hashed, never in plaintext", async () => {
    const key = await newTenant();
    const rows = await env.DB.prepare("SELECT key_hash FROM api_keys").all<{ key_hash: string }>();
    expect(rows.results.some((r) => r.key_hash.includes(key))).toBe(false);
    expect(rows.results.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash))).toBe(true);
  });
});

describe("conversations", () => {
  it("creates with default settings, gets, lists newest first and patches", async () => {
    const a = await createConversation();
    const b = await createConversation({ foldThresholdChars: 5000 });
    const got = await api("GET", `/v1/conversations/${b}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      id: b,
      messageCount: 0,
      summary: null,
      summarizedThroughMessage: null,
      summarizedThroughMessageId: null,
    });
    expect(got.json.settings).toMatchObject({
      foldThresholdChars: 5000,
      tailMessages: 8,
      summaryMaxChars: 6000,
      stubMinChars: 2000,
      compactTriggerRatio: 0.75,
      charsPerToken: 1.15,
      contextWindowTokens: 1_000_000,
      model: "claude-sonnet-5-5",
    });
    const list = await eventually(async () => {
      const r = await api("GET", "/v1/conversations?limit=100");
      return r.json.data.some((c) => c.id === a) ? r : null;
    });
    const ids = list!.json.data.map((c) => c.id);
    expect(ids.indexOf(b)).toBeLessThan(ids.indexOf(a));
    const p = await api("PATCH", `/v1/conversations/${a}`, { title: "renamed", settings: { tailMessages: 12 } });
    expect(p.status).toBe(200);
    expect(p.json.title).toBe("renamed");
    expect(p.json.settings.tailMessages).toBe(12);
    expect((await api("GET", `/v1/conversations/${a}`)).json.settings.tailMessages).toBe(12);
  });

  it("pages the conversation list with a cursor", async () => {
    const key = await newTenant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createConversation(undefined, key));
    const first = await api("GET", "/v1/conversations?limit=2", undefined, { key });
    expect(first.json.data.map((c) => c.id)).toEqual([made[4], made[3]]);
    const second = await api("GET", `/v1/conversations?limit=2&cursor=${first.json.next}`, undefined, { key });
    expect(second.json.data.map((c) => c.id)).toEqual([made[2], made[1]]);
  });

  it("rejects bad settings with a 400 that names the field, and changes nothing", async () => {
    const id = await createConversation();
    const unknown = await api("PATCH", `/v1/conversations/${id}`, { settings: { foldThreshold: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error?.message).toMatch(/foldThreshold/);
    const range = await api("PATCH", `/v1/conversations/${id}`, { settings: { tailMessages: 0 } });
    expect(range.status).toBe(400);
    expect(range.json.error?.message).toMatch(/tailMessages/);
    const type = await api("POST", "/v1/conversations", { settings: { charsPerToken: "fast" } });
    expect(type.status).toBe(400);
    expect(type.json.error?.message).toMatch(/charsPerToken/);
    const cross = await api("PATCH", `/v1/conversations/${id}`, {
      settings: { contextWindowTokens: 4000, outputReserveTokens: 8000 },
    });
    expect(cross.status).toBe(400);
    expect(cross.json.error?.message).toMatch(/outputReserveTokens/);
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.contextWindowTokens).toBe(1_000_000);
  });

  it("answers malformed JSON, wrong content types and unknown routes with JSON errors", async () => {
    const id = await createConversation();
    const bad = await api("POST", `/v1/conversations/${id}/messages`, "{not json", {
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/JSON/);
    const missing = await api("POST", `/v1/conversations/${id}/messages`, {});
    expect(missing.status).toBe(400);
    expect(missing.json.error?.message).toMatch(/content/);
    const wrongType = await api("POST", `/v1/conversations/${id}/messages`, "hello", {
      headers: { "content-type": "text/plain" },
    });
    expect(wrongType.status).toBe(415);
    expect((await api("GET", "/v1/nothing-here")).json.error?.type).toBe("not_found");
    expect((await transcript(id)).length).toBe(0);
  });

  it("refuses bodies over the limit with a 413", async () => {
    const r = await api("POST", "/v1/conversations", { title: "x".repeat(300 * 1024) });
    expect(r.status).toBe(413);
    expect(r.json.error?.type).toBe("payload_too_large");
  });
});

describe("turns", () => {
  it("runs a turn and saves the user message and the reply with usage", async () => {
    const id = await createConversation();
    const r = await send(id, "hello there, marker-alpha");
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const [user, assistant] = turnMessages(r);
    expect(user).toMatchObject({
      role: "user",
      seq: 1,
      content: [{ type: "text", text: "hello there, marker-alpha" }],
    });
    expect(assistant.role).toBe("assistant");
    const u = assistant.usage!;
    expect(u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens).toBeGreaterThan(1000);
    expect(u.output_tokens).toBeGreaterThan(0);
    expect(r.json.usage!.output_tokens).toBe(u.output_tokens);
    expect(r.headers.get("server-timing")).toMatch(/app;dur=\d+.*model;dur=\d+/);
    const t = await transcript(id);
    expect(t.map((m) => m.id)).toEqual([user.id, assistant.id]);
  });

  it("saves a long streamed reply as one coalesced text block", async () => {
    const id = await createConversation();
    const r = await send(id, "@reply-chars 6000");
    const assistant = turnMessages(r).find((m) => m.role === "assistant");
    // One text block beside the thinking the model opened its reply with.
    const texts = assistant!.content.filter((b) => b.type === "text");
    expect(texts).toHaveLength(1);
    expect(assistant!.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect(texts[0].text.length).toBeGreaterThan(5500);
  });

  it("serializes 20 parallel sends into 20 ordered turns, none lost", async () => {
    const id = await createConversation();
    const markers = Array.from({ length: 20 }, (_, i) => `parallel-${i}-${crypto.randomUUID()}`);
    const results = await Promise.all(markers.map((m) => send(id, m)));
    expect(results.map((r) => r.status)).toEqual(markers.map(() => 200));
    const t = await transcript(id);
    expect(t).toHaveLength(40);
    expect(t.map((m) => m.seq)).toEqual(t.map((_, i) => i + 1));
    for (let i = 0; i < t.length; i++) expect(t[i].role).toBe(i % 2 === 0 ? "user" : "assistant");
    const users = t.filter((m) => m.role === "user").map(textOf);
    for (const m of markers) expect(users.filter((u) => u === m)).toHaveLength(1);
    // Each response carries its own turn: its user message and the reply right after it.
    for (const [i, r] of results.entries()) {
      const [user, reply] = turnMessages(r);
      expect(textOf(user)).toBe(markers[i]);
      expect(reply.seq).toBe(user.seq + 1);
    }
  });

  it("runs tool calls in a loop and reads any message byte for byte with conversation_read", async () => {
    const id = await createConversation();
    const big = await send(id, "@reply-chars 25000");
    const bigMsg = turnMessages(big).find((m) => m.role === "assistant")!;
    const r = await send(id, `read it\n@tool conversation_read {"message_id":"${bigMsg!.id}"}`);
    expect(r.status).toBe(200);
    const roles = r.json.messages.map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "user", "assistant"]);
    const result = ofType(turnMessages(r)[2].content[0], "tool_result");
    const body = resultText(result).slice(resultText(result).indexOf("\n") + 1);
    expect(body).toBe(replyText(bigMsg));
    // One message or a range, never both: the range is not silently dropped.
    const both = await send(id, `@tool conversation_read {"message_id":"${bigMsg!.id}","from_seq":1}`);
    expect(ofType(turnMessages(both)[2].content[0], "tool_result")).toMatchObject({
      is_error: true,
      content: "give message_id or from_seq/to_seq, not both",
    });
  });

  it("pages a message larger than one read and names the next call", async () => {
    const id = await createConversation();
    const big = await send(id, "@reply-chars 60000");
    const bigMsg = turnMessages(big).find((m) => m.role === "assistant")!;
    const first = await send(id, `@tool conversation_read {"message_id":"${bigMsg!.id}"}`);
    const page1 = resultText(ofType(turnMessages(first)[2].content[0], "tool_result"));
    const next = /next page: conversation_read (\{.*\})\]/.exec(page1);
    expect(next).not.toBeNull();
    const second = await send(id, `@tool conversation_read ${next![1]}`);
    const page2 = resultText(ofType(turnMessages(second)[2].content[0], "tool_result"));
    const strip = (s: string) => s.slice(s.indexOf("\n") + 1);
    expect(strip(page1) + strip(page2)).toBe(replyText(bigMsg));
  });

  it("reads another conversation of the same tenant, but never another tenant's", async () => {
    const mine = await createConversation();
    const other = await createConversation();
    await send(other, "secret-in-other-conversation");
    const r = await send(mine, `@tool conversation_read {"conversation_id":"${other}","from_seq":1}`);
    expect(r.json.messages[2].content[0].content).toContain("secret-in-other-conversation");
    const keyB = await newTenant();
    const theirs = await createConversation(undefined, keyB);
    const rb = await send(theirs, `@tool conversation_read {"conversation_id":"${mine}","from_seq":1}`, keyB);
    const out = rb.json.messages[2].content[0];
    expect(out.is_error).toBe(true);
    expect(out.content).not.toContain("secret-in-other-conversation");
  });

  it("answers unknown tools and bad tool input as error results, and the turn goes on", async () => {
    const id = await createConversation();
    const r = await send(id, `@tool no_such_tool {}\n@tool conversation_read {"from_seq":"one"}`);
    expect(r.status).toBe(200);
    const results = r.json.messages[2].content;
    expect(results).toHaveLength(2);
    expect(results.every((b) => b.is_error)).toBe(true);
    expect(results[1].content).toMatch(/from_seq/);
    expect(r.json.messages[3].role).toBe("assistant");
  });

  it("streams a turn as SSE with deltas, messages and turn_end", async () => {
    const id = await createConversation();
    const res = await (await import("cloudflare:workers")).exports.default.fetch(
      new Request(`http://chat.test/v1/conversations/${id}/messages`, {
        method: "POST",
        headers: {
          authorization: "Bearer dev-local-key",
          "content-type": "application/json",
          accept: "text/event-stream",
        },
        body: JSON.stringify({ content: "@reply-chars 800" }),
      }),
    );
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text();
    const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names[0]).toBe("turn_start");
    expect(names.filter((n) => n === "delta").length).toBeGreaterThan(5);
    expect(names.filter((n) => n === "message")).toHaveLength(2);
    expect(names[names.length - 1]).toBe("turn_end");
  });

  it("surfaces a model 529 cleanly: the user message is saved and the error reported", async () => {
    const id = await createConversation();
    const r = await send(id, "please fail\n@model-error 529");
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ type: "model_error", status: 529 });
    expect(r.json.messages).toHaveLength(1);
    const t = await transcript(id);
    expect(t.map((m) => m.role)).toEqual(["user"]);
    const next = await send(id, "and now succeed");
    expect(next.status).toBe(200);
    const replay = await api("GET", `/v1/conversations/${id}/replay`);
    expect(replay.json.messages[0].role).toBe("user");
  });

  it("surfaces the provider's context-overflow 400 cleanly", async () => {
    const id = await createConversation({ model: "offline-4k", contextWindowTokens: 200000 });
    const r = await send(id, "lorem ipsum dolor sit amet ".repeat(2000));
    expect(r.status).toBe(502);
    expect(r.json.error?.type).toBe("context_overflow");
    expect(r.json.error?.message).toMatch(/prompt is too long: \d+ tokens > 4000 maximum/);
    expect(await transcript(id)).toHaveLength(1);
  });
});

describe("replay", () => {
  it("returns exactly what the next model request carries", async () => {
    const id = await createConversation();
    await send(id, "first question");
    const r = await api("GET", `/v1/conversations/${id}/replay`);
    expect(r.status).toBe(200);
    expect(r.json.model).toBe("claude-sonnet-5-5");
    // Claude Sonnet 5.5 thinks by default: the request asks for its thinking summarized, at the model's default effort.
    expect(r.json.thinking).toEqual({ type: "adaptive", display: "summarized" });
    expect(r.json.output_config).toBeUndefined();
    expect(r.json.max_tokens).toBe(32_000);
    expect(r.json.system[0].text).toMatch(/operating_contract/);
    expect(r.json.tools.map((t) => t.name)).toContain("conversation_read");
    expect(r.json.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(r.json.messages[0].content[0]).toMatchObject({ type: "text", text: "first question" });
    // The reply's thinking goes back exactly as stored, its prefix unchanged since it was produced.
    const saved = (await api("GET", `/v1/conversations/${id}/messages`)).json.data[1];
    expect(r.json.messages[1].content[0]).toEqual(saved.content[0]);
    expect(saved.content[0]).toMatchObject({ type: "thinking", signature: expect.any(String) });
    expect(saved.thinkingPrefixes).toHaveLength(1);
    expect(r.json.estimate.tokens).toBe(Math.ceil(r.json.estimate.chars / 1.15));
    expect(r.json.estimate.budgetTokens).toBe(1_000_000 - 32_000);
  });
});

describe("the Durable Object", () => {
  it("rebuilds from R2 after its storage is wiped: same transcript, same replay", async () => {
    const id = await createConversation({ tailMessages: 10 });
    await send(id, "one");
    await send(id, "@reply-chars 3000");
    await send(id, `@tool conversation_read {"from_seq":1,"to_seq":2}`);
    const before = await transcript(id);
    const replayBefore = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const metaBefore = (await api("GET", `/v1/conversations/${id}`)).json;
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAll();
    });
    await evictDurableObject(stub);
    expect(await transcript(id)).toEqual(before);
    expect((await api("GET", `/v1/conversations/${id}/replay`)).json).toEqual(replayBefore);
    expect((await api("GET", `/v1/conversations/${id}`)).json).toEqual(metaBefore);
    const next = await send(id, "after the rebuild");
    expect(next.json.messages[0].seq).toBe(before.length + 1);
  });

  it("adopts an R2 batch that a crash left out of its index", async () => {
    const id = await createConversation();
    await send(id, "kept");
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec("DELETE FROM messages WHERE seq = 2");
    });
    await evictDurableObject(stub);
    const t = await transcript(id);
    expect(t.map((m) => m.seq)).toEqual([1, 2]);
  });
});

describe("search", () => {
  it("finds saved messages by words and exact identifiers, tenant-scoped", async () => {
    const id = await createConversation();
    const marker = `flightplan-${crypto.randomUUID().slice(0, 8)}`;
    await send(id, `the flight plan is in ${marker}.txt`);
    const found = await eventually(async () => {
      const r = await api("GET", `/v1/search?q=${encodeURIComponent(`${marker}.txt`)}`);
      return r.json.data.length ? r : null;
    });
    expect(found!.json.data[0]).toMatchObject({ conversationId: id, role: "user", seq: 1 });
    expect(found!.json.data[0].snippet).toContain("[");
    const stemmed = await api("GET", `/v1/search?q=${encodeURIComponent(`plans ${marker}`)}&conversation=${id}`);
    expect(stemmed.json.data.length).toBeGreaterThan(0);
    const keyB = await newTenant();
    const other = await api("GET", `/v1/search?q=${encodeURIComponent(marker)}`, undefined, { key: keyB });
    expect(other.status).toBe(200);
    expect(other.json.data).toEqual([]);
    expect((await api("GET", "/v1/search")).status).toBe(400);
    expect((await api("GET", `/v1/search?q=${encodeURIComponent('"unbalanced AND (')}`)).status).toBe(200);
  });

  it("indexes idempotently: indexing the same messages twice leaves one row each", async () => {
    const id = await createConversation();
    await send(id, "idempotent-indexing-check");
    const count = () => shardCount("SELECT COUNT(*) AS n FROM cortex_docs WHERE conversation_id = ?", [id]);
    await eventually(async () => (await count()) === 2);
    const { messageDoc } = await import("../../services/cortex/search-index");
    const t = await transcript(id);
    await (await cortexFor(env as Env, "dev")).index(
      "dev",
      t.map((m) => messageDoc("dev", id, m)),
    );
    expect(await count()).toBe(2);
  });
});

describe("tenant isolation", () => {
  it("answers 404 on every conversation route for another tenant's id", async () => {
    const id = await createConversation();
    await send(id, "private words");
    const keyB = await newTenant();
    const routes: [Method, string, unknown?][] = [
      ["GET", `/v1/conversations/${id}`],
      ["PATCH", `/v1/conversations/${id}`, { title: "mine now" }],
      ["GET", `/v1/conversations/${id}/messages`],
      ["POST", `/v1/conversations/${id}/messages`, { content: "intrude" }],
      ["GET", `/v1/conversations/${id}/replay`],
      ["POST", `/v1/conversations/${id}/ws-ticket`],
      ["GET", `/v1/conversations/${id}/ws`],
    ];
    for (const [method, path, body] of routes) {
      const r = await api(method, path, body, {
        key: keyB,
        headers: path.endsWith("/ws") ? { upgrade: "websocket" } : {},
      });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.text).not.toContain("private words");
    }
    const list = await api("GET", "/v1/conversations", undefined, { key: keyB });
    expect(list.json.data.map((c) => c.id)).not.toContain(id);
    expect((await transcript(id)).length).toBe(2);
    expect((await api("GET", `/v1/conversations/${id}`)).json.title).toBe("test");
  });

  it("treats malformed and path-trick ids as unknown", async () => {
    for (const bad of ["..%2F..%2Fhead.json", "conv_x", `conv_${"Z".repeat(40)}`, "%00"]) {
      const r = await api("GET", `/v1/conversations/${bad}`);
      expect(r.status).toBe(404);
      expect(r.json.error?.type).toBe("not_found");
    }
  });
});
