// Helpers for workerd integration tests: requests through the chat worker's real fetch handler.
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createOfflineModelFetch } from "../../core/offline-model";
import { exports } from "cloudflare:workers";
import { jsonOrUndefined } from "../json-body";

export const DEV_KEY = "dev-local-key";
export const ADMIN = "dev-admin-token";

export interface ApiResult<T = any> {
  status: number;
  json: T;
  text: string;
  headers: Headers;
}

export async function api<T = any>(method: string, path: string, body?: unknown, opts: { key?: string; headers?: Record<string, string>; raw?: boolean } = {}): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { ...(opts.key === "" ? {} : { authorization: `Bearer ${opts.key ?? DEV_KEY}` }), ...opts.headers };
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    if (opts.raw || typeof body === "string") payload = body as BodyInit;
    else {
      headers["content-type"] ??= "application/json";
      payload = JSON.stringify(body);
    }
  }
  const res = await (exports as any).default.fetch(new Request(`http://chat.test${path}`, { method, headers, body: payload }));
  const text = await res.text();
  const json = jsonOrUndefined(text);
  return { status: res.status, json, text, headers: res.headers };
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

export const send = (id: string, content: unknown, key?: string) => api("POST", `/v1/conversations/${id}/messages`, { content }, { key });

/** One turn asked for as SSE: its events in order, each with its SSE event name and its JSON. */
export async function sendSseEvents(id: string, content: unknown, key?: string): Promise<{ type: string; data: any }[]> {
  const r = await api("POST", `/v1/conversations/${id}/messages`, { content }, { key, headers: { accept: "text/event-stream" } });
  return [...r.text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => ({ type: m[1], data: JSON.parse(m[2]) }));
}

/** One turn asked for as SSE: its events in order, each event's JSON. */
export async function sendSse(id: string, content: unknown, key?: string): Promise<any[]> {
  return (await sendSseEvents(id, content, key)).map((e) => e.data);
}

export async function transcript(id: string, key?: string): Promise<any[]> {
  const all: any[] = [];
  let after = 0;
  for (;;) {
    const r = await api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=100`, undefined, { key });
    all.push(...r.json.messages);
    if (!r.json.next) return all;
    after = r.json.next;
  }
}

export const textOf = (m: any): string =>
  (m.content as any[])
    .filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking")
    .map((b) => (b.type === "text" ? b.text : b.type === "tool_result" ? (typeof b.content === "string" ? b.content : "") : JSON.stringify(b.input ?? "")))
    .join("\n");

/** A reply's text: its text blocks joined (a reply of a thinking model starts with a thinking block). */
export const replyText = (m: any): string => (m.content as any[]).filter((b) => b.type === "text").map((b) => b.text).join("");

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
  const res: Response = await (exports as any).default.fetch(new Request(`http://chat.test${path}`, { headers: { upgrade: "websocket", ...headers } }));
  const ws: WebSocket | null = (res as any).webSocket ?? null;
  const events: any[] = [];
  const waiters: { pred: (e: any) => boolean; resolve: (e: any) => void }[] = [];
  if (ws) {
    ws.accept();
    ws.addEventListener("message", (m) => {
      const e = JSON.parse(m.data as string);
      events.push(e);
      for (const w of [...waiters]) if (w.pred(e)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(e));
    });
  }
  const next = (pred: (e: any) => boolean, timeoutMs = 15_000) =>
    new Promise<any>((resolve, reject) => {
      const hit = events.find(pred);
      if (hit) return resolve(hit);
      waiters.push({ pred, resolve });
      setTimeout(() => reject(new Error(`timed out; saw ${events.map((e) => e.type).join(",")}`)), timeoutMs);
    });
  return { status: res.status, text: ws ? "" : await res.text(), headers: res.headers, ws, events, next };
}

/**
 * What the offline model counts for a request (its count_tokens endpoint), as the model it stands
 * in for counts it: the replay view of `replay` plus `prompt` as a new user message.
 */
export async function modelCount(replay: any, prompt: string): Promise<number> {
  const { estimate: _e, max_tokens: _m, ...request } = replay;
  const res = await createOfflineModelFetch()(`${OFFLINE_BASE_URL}/v1/messages/count_tokens`, {
    method: "POST",
    body: JSON.stringify({ ...request, messages: [...replay.messages, { role: "user", content: [{ type: "text", text: prompt }] }] }),
  });
  return ((await res.json()) as { input_tokens: number }).input_tokens;
}
