// A small HTTP/WebSocket client for the running stack, the way an outside client would use it.
import { inject } from "vitest";
import { jsonOrUndefined } from "../json-body";

export const KEY = "dev-local-key";
export const ADMIN = "dev-admin-token";
export const base = () => inject("baseUrl");

export async function api(method: string, path: string, body?: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.key ?? KEY}`, ...opts.headers };
  let payload: string | undefined;
  if (body !== undefined) {
    headers["content-type"] ??= "application/json";
    payload = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await fetch(base() + path, { method, headers, body: payload });
  const text = await res.text();
  const json = jsonOrUndefined(text);
  return { status: res.status, json, text, headers: res.headers };
}

export async function newConversation(settings?: Record<string, unknown>, key?: string): Promise<string> {
  const r = await api("POST", "/v1/conversations", { title: "e2e", ...(settings ? { settings } : {}) }, { key });
  if (r.status !== 201) throw new Error(`create ${r.status} ${r.text}`);
  return r.json.id;
}

export async function transcript(id: string, key?: string): Promise<any[]> {
  const all: any[] = [];
  let after = 0;
  for (;;) {
    const r = await api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=200`, undefined, { key });
    all.push(...r.json.messages);
    if (!r.json.next) return all;
    after = r.json.next;
  }
}

export interface SocketSession {
  ws: WebSocket;
  events: any[];
  next(pred: (e: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): void;
}

export function openSocket(id: string, auth: { ticket?: string; key?: string }): Promise<SocketSession> {
  const url = `${base().replace(/^http/, "ws")}/v1/conversations/${id}/ws${auth.ticket ? `?ticket=${auth.ticket}` : ""}`;
  // Node's WebSocket (undici) accepts headers through this non-standard option, as non-browser clients do.
  const ws = new WebSocket(url, auth.key ? ({ headers: { authorization: `Bearer ${auth.key}` } } as any) : undefined);
  const events: any[] = [];
  const waiters: { pred: (e: any) => boolean; resolve: (e: any) => void }[] = [];
  ws.addEventListener("message", (m) => {
    const e = JSON.parse(String(m.data));
    events.push(e);
    for (const w of [...waiters]) if (w.pred(e)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(e));
  });
  return new Promise((resolve, reject) => {
    ws.addEventListener("open", () =>
      resolve({
        ws,
        events,
        close: () => ws.close(),
        next: (pred, timeoutMs = 20_000) =>
          new Promise((res, rej) => {
            const hit = events.find(pred);
            if (hit) return res(hit);
            waiters.push({ pred, resolve: res });
            setTimeout(() => rej(new Error(`timed out; saw ${events.map((e) => e.type).join(",")}`)), timeoutMs);
          }),
      }),
    );
    ws.addEventListener("error", () => reject(new Error("websocket refused")));
  });
}
