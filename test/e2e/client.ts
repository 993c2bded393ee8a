// The running stack through the typed client (client/), the way an outside client would use it.
import { inject } from "vitest";
import { createClient, type Client, type ConversationSocket, type Message } from "../../client";
import type { Method, ResponseOf } from "../route-types";

export const KEY = "dev-local-key";
export const ADMIN = "dev-admin-token";
export const base = () => inject("baseUrl");

/** The typed client for the dev tenant (`.as(key)` for another tenant or the admin token). */
export const client = (key = KEY): Client => createClient({ baseUrl: base(), key });

/** A request outside the document's types (refusals, raw bodies), still through the client. */
export async function api<M extends Method, P extends string>(
  method: M,
  path: P,
  body?: unknown,
  opts: { key?: string; headers?: Record<string, string> } = {},
) {
  const raw = body === undefined || typeof body === "string";
  const headers = { ...(raw ? {} : { "content-type": "application/json" }), ...opts.headers };
  const r = await client(opts.key).send<ResponseOf<M, P>>(method, path, {
    body: raw ? (body as string | undefined) : JSON.stringify(body),
    headers,
  });
  return { status: r.status, json: r.data, text: r.text, headers: r.headers };
}

export async function newConversation(settings?: Record<string, unknown>, key?: string): Promise<string> {
  const r = await client(key).request("POST /v1/conversations", {
    body: { title: "e2e", ...(settings ? { settings } : {}) },
  });
  if (r.status !== 201) throw new Error(`create ${r.status} ${r.text}`);
  return r.data.id;
}

/** The whole transcript, paged by the seq cursor. */
export async function transcript(id: string, key?: string): Promise<Message[]> {
  const all: Message[] = [];
  for await (const m of client(key).messages(id)) all.push(m);
  return all;
}

/** The texts of a message's text blocks, in order. */
export const textBlocks = (content: readonly { type: string; [key: string]: unknown }[]): string[] =>
  content.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []));

export function openSocket(id: string, auth: { ticket?: string; key?: string }): Promise<ConversationSocket> {
  return createClient({ baseUrl: base(), key: auth.key }).socket(id, auth.ticket ? { ticket: auth.ticket } : {});
}
