// Helpers for workerd integration tests: requests through the chat worker's real fetch handler.
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createOfflineModelFetch } from "../../core/offline-model";
import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import type { ConversationDO } from "../../durable-objects/conversation/conversation-do";
import type { ConversationRecord } from "../../durable-objects/conversation/record";
import type { IndexOutbox } from "../../durable-objects/conversation/index-outbox";
import type { ConversationStore } from "../../durable-objects/conversation/conversation-store";
import type { FoldCoordinator } from "../../durable-objects/conversation/fold-coordinator";
import type { ReplayCache } from "../../durable-objects/conversation/replay-cache";
import type { PausedTurns } from "../../durable-objects/conversation/paused-turn";
import { jsonOrUndefined } from "../json-body";
import type { Body, Method, ResponseOf } from "../route-types";

export type { Method };
import type { TurnEvent } from "../../core/events";
import type { ContentBlock, StoredMessage } from "../../core/types";
import type { ServerFrame } from "../../client/socket";

export const DEV_KEY = "dev-local-key";
export const ADMIN = "dev-admin-token";

export interface ApiResult<T = Body<unknown>> {
  status: number;
  json: T;
  text: string;
  headers: Headers;
}

/** The chat worker's fetch handler (the default export of the worker under test). */
export const worker = () => (exports as unknown as { default: { fetch(req: Request): Promise<Response> } }).default;

export async function api<M extends Method, P extends string>(
  method: M,
  path: P,
  body?: unknown,
  opts: { key?: string; headers?: Record<string, string>; raw?: boolean } = {},
): Promise<ApiResult<ResponseOf<M, P>>> {
  const headers: Record<string, string> = {
    ...(opts.key === "" ? {} : { authorization: `Bearer ${opts.key ?? DEV_KEY}` }),
    ...opts.headers,
  };
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    if (opts.raw || typeof body === "string") payload = body as BodyInit;
    else {
      headers["content-type"] ??= "application/json";
      payload = JSON.stringify(body);
    }
  }
  const res = await worker().fetch(new Request(`http://chat.test${path}`, { method, headers, body: payload }));
  const text = await res.text();
  // The answer as the OpenAPI document describes it (test/workers/openapi.test.ts checks answers against it).
  const json = jsonOrUndefined(text) as ResponseOf<M, P>;
  return { status: res.status, json, text, headers: res.headers };
}

/** POST /v1/conversations/import with `body` sent as written (a transcript's own bytes), typed `type`. */
export const importText = (body: string, key: string, type = "application/json") =>
  api("POST", "/v1/conversations/import", body, { key, raw: true, headers: { "content-type": type } });

/**
 * A conversation imported for `key` with `n` messages, a user question and an assistant answer in
 * turn (seq 1..n): long enough that a socket's catch-up from 0 pages what its resume leaves out.
 */
export async function importAlternating(key: string, n: number): Promise<string> {
  const messages = Array.from({ length: n }, (_, i) =>
    i % 2 ? { role: "assistant", content: `answer ${i}` } : { role: "user", content: `question ${i}` },
  );
  const imported = await importText(JSON.stringify({ model: "claude", max_tokens: 100, messages }), key);
  if (imported.status !== 201) throw new Error(`import: ${imported.status} ${imported.text}`);
  return imported.json.id;
}

export async function createConversation(settings?: Record<string, unknown>, key?: string): Promise<string> {
  const r = await api("POST", "/v1/conversations", { title: "test", ...(settings ? { settings } : {}) }, { key });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

/** A fresh tenant through the admin API: its id and its first key. */
export async function newTenantWithId(): Promise<{ tenantId: string; key: string }> {
  const r = await api("POST", "/v1/admin/tenants", { name: `t-${crypto.randomUUID()}` }, { key: ADMIN });
  if (r.status !== 201) throw new Error(`tenant: ${r.status} ${r.text}`);
  return { tenantId: r.json.tenant.id, key: r.json.apiKey };
}

export async function newTenant(): Promise<string> {
  return (await newTenantWithId()).key;
}

export const send = (id: string, content: unknown, key?: string) =>
  api("POST", `/v1/conversations/${id}/messages`, { content }, { key });

/** An SSE event of a turn: its event name and its JSON, the one tagging the other. */
export type SseEvent = {
  [K in TurnEvent["type"]]: { type: K; data: Extract<TurnEvent, { type: K }> };
}[TurnEvent["type"]];

/** One turn asked for as SSE: its events in order, each with its SSE event name and its JSON. */
export async function sendSseEvents(id: string, content: unknown, key?: string): Promise<SseEvent[]> {
  const r = await api(
    "POST",
    `/v1/conversations/${id}/messages`,
    { content },
    { key, headers: { accept: "text/event-stream" } },
  );
  return sseEventsOf(r.text);
}

/** The events of an SSE answer's text, in order, each with its SSE event name and its JSON. */
export const sseEventsOf = (text: string): SseEvent[] =>
  [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => ({ type: m[1], data: JSON.parse(m[2]) }) as SseEvent);

/** One turn asked for as SSE: its events in order, each event's JSON. */
export async function sendSse(id: string, content: unknown, key?: string): Promise<TurnEvent[]> {
  return (await sendSseEvents(id, content, key)).map((e) => e.data);
}

/** A transcript message: as stored, plus the markers the transcript adds (a regenerate's `superseded`). */
export type TranscriptMessage = StoredMessage & { superseded?: true; supersededBy?: string };

export async function transcript(id: string, key?: string): Promise<TranscriptMessage[]> {
  const all: TranscriptMessage[] = [];
  let after = 0;
  for (;;) {
    const r = await api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=100`, undefined, { key });
    if (r.status !== 200) throw new Error(`transcript: ${r.status} ${r.text}`);
    // The document describes a message loosely (any block type); the server sends stored messages.
    const page = jsonOrUndefined(r.text) as { data: TranscriptMessage[]; next: number | null };
    all.push(...page.data);
    if (!page.next) return all;
    after = page.next;
  }
}

export const textOf = (m: { content: ContentBlock[] }): string =>
  m.content
    .filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking")
    .map((b) =>
      b.type === "text"
        ? b.text
        : b.type === "tool_result"
          ? typeof b.content === "string"
            ? b.content
            : ""
          : JSON.stringify(("input" in b ? b.input : undefined) ?? ""),
    )
    .join("\n");

/** A reply's text: its text blocks joined (a reply of a thinking model starts with a thinking block). */
export const replyText = (m: { content: ContentBlock[] }): string =>
  m.content
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");

/**
 * Polls until fn returns a truthy value (indexing runs after the response) and returns it; fails
 * the test when the time runs out, so a caller that ignores the value still asserts the condition.
 */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await fn();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 100));
  } while (Date.now() < end);
  throw new Error(`eventually: still ${JSON.stringify(last)} after ${timeoutMs} ms`);
}

/** A websocket to the chat worker: every frame it receives in `events`, and `next` to await one. */
export async function connectSocket(path: string, headers: Record<string, string> = {}) {
  const res = await worker().fetch(
    new Request(`http://chat.test${path}`, { headers: { upgrade: "websocket", ...headers } }),
  );
  const ws: WebSocket | null = res.webSocket ?? null;
  const events: ServerFrame[] = [];
  const waiters: { pred: (e: ServerFrame) => boolean; resolve: (e: ServerFrame) => void }[] = [];
  if (ws) {
    ws.accept();
    ws.addEventListener("message", (m) => {
      const e = JSON.parse(m.data as string) as ServerFrame;
      events.push(e);
      for (const w of [...waiters])
        if (w.pred(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
    });
  }
  /** The first frame (already received or still to come) that `pred` accepts; narrowed when `pred` is a type guard. */
  function next<F extends ServerFrame>(pred: (e: ServerFrame) => e is F, timeoutMs?: number): Promise<F>;
  function next(pred: (e: ServerFrame) => boolean, timeoutMs?: number): Promise<ServerFrame>;
  function next(pred: (e: ServerFrame) => boolean, timeoutMs = 15_000) {
    return new Promise<ServerFrame>((resolve, reject) => {
      const hit = events.find(pred);
      if (hit) return resolve(hit);
      waiters.push({ pred, resolve });
      setTimeout(() => reject(new Error(`timed out; saw ${events.map((e) => e.type).join(",")}`)), timeoutMs);
    });
  }
  return { status: res.status, text: ws ? "" : await res.text(), headers: res.headers, ws, events, next };
}

/**
 * What the offline model counts for a request (its count_tokens endpoint), as the model it stands
 * in for counts it: the replay view of `replay` plus `prompt` as a new user message.
 */
export async function modelCount(
  replay: { messages: unknown[]; [key: string]: unknown },
  prompt: string,
): Promise<number> {
  const { estimate: _e, max_tokens: _m, ...request } = replay;
  const res = await createOfflineModelFetch()(`${OFFLINE_BASE_URL}/v1/messages/count_tokens`, {
    method: "POST",
    body: JSON.stringify({
      ...request,
      messages: [...replay.messages, { role: "user", content: [{ type: "text", text: prompt }] }],
    }),
  });
  return ((await res.json()) as { input_tokens: number }).input_tokens;
}

/** A conversation's Durable Object stub, by conversation id. */
export const conversationStub = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));

/** The parts of a live ConversationDO that tests reach into, its private members included. */
export interface ConversationInternals {
  env: Env;
  store: ConversationStore;
  record: ConversationRecord;
  outbox: IndexOutbox;
  fold: FoldCoordinator;
  paused: PausedTurns;
  cache: ReplayCache;
  importTranscript: ConversationDO["importTranscript"];
  foldSource: ConversationDO["foldSource"];
}

/** Runs `fn` inside the conversation's live object (by conversation id or stub), with its internals and state. */
export function inConversation<R>(
  target: string | DurableObjectStub,
  fn: (instance: ConversationInternals, state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  const stub = typeof target === "string" ? conversationStub(target) : target;
  // The instance is the ConversationDO; tests read members that are private to it, hence the view.
  const run = runInDurableObject as unknown as (
    stub: DurableObjectStub,
    fn: (instance: ConversationInternals, state: DurableObjectState) => R | Promise<R>,
  ) => Promise<R>;
  return run(stub, fn);
}

/** The saved messages of a turn's JSON answer (or any answer with `messages`), as the stored messages they are (the document describes them loosely). */
export function turnMessages(r: { text: string }): StoredMessage[] {
  const body = jsonOrUndefined(r.text) as { messages?: StoredMessage[] } | undefined;
  if (!body?.messages) throw new Error(`no messages in ${r.text.slice(0, 200)}`);
  return body.messages;
}

/** Every R2 key under `prefix`, page by page. */
export async function r2KeysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.BUCKET.list({ prefix, cursor });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}
