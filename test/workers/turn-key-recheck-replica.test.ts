// A turn's key re-check (the JSON answer's, and the SSE stream's every few seconds) reads the key at
// the primary, as the request's own key lookup did, not through the request's D1 session: a session
// a client's bookmark started on a replica that has not seen the key yet must neither refuse a valid
// key once the auth cache has lapsed nor cache that "no key" and lock the key out.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../workers/chat/app";
import { SSE_KEY_RECHECK_MS } from "../../workers/chat/turn-response";
import { api, newTenant } from "./helpers";
import { laggingReplica } from "./lagging-replica";

async function turnLagging(request: { path: string; key: string; body: unknown; bookmark: string }) {
  const { path, key, body, bookmark } = request;
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-d1-bookmark": bookmark },
      body: JSON.stringify(body),
    }),
    { ...env, DB: laggingReplica(env.DB, "api_keys") } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A fresh key of a fresh tenant, a conversation of it, and a bookmark from before the key existed. */
async function rotatedKey() {
  const tenantKey = await newTenant();
  // A bookmark the client holds from before its new key existed (a rotation).
  const before = await api("GET", "/v1/keys", undefined, { key: tenantKey });
  const bookmark = before.headers.get("x-d1-bookmark") ?? "";
  const fresh = (await api("POST", "/v1/keys", { name: "rotated" }, { key: tenantKey })).json.apiKey;
  const id = (await api("POST", "/v1/conversations", {}, { key: fresh })).json.id;
  return { fresh, id, bookmark };
}

describe("a turn's key re-check on a lagging session", () => {
  it("answers a valid key whose row the replica has not seen, and does not lock it out", async () => {
    const { fresh, id, bookmark } = await rotatedKey();

    // A turn that outlasts the auth cache's minute: the clock moves 61 s on while it streams.
    const real = Date.now.bind(Date);
    const body = { content: "hello\n@stream-pace 400\n@reply-chars 40" };
    const pending = turnLagging({ path: `/v1/conversations/${id}/messages`, key: fresh, body, bookmark });
    await new Promise((r) => setTimeout(r, 300));
    const spy = vi.spyOn(Date, "now").mockImplementation(() => real() + 61_000);
    try {
      const answered = await pending;
      expect(answered.status, JSON.stringify(answered.json)).toBe(200);
      const next = await api("GET", "/v1/keys", undefined, { key: fresh });
      expect(next.status, next.text).toBe(200);
    } finally {
      spy.mockRestore();
    }
  });

  it("keeps an SSE stream of a valid key whose row the replica has not seen to its turn_end", async () => {
    const { fresh, id, bookmark } = await rotatedKey();
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(`http://chat.test/v1/conversations/${id}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${fresh}`,
          "content-type": "application/json",
          accept: "text/event-stream",
          "x-d1-bookmark": bookmark,
        },
        // About 25 deltas 300 ms apart: the reply streams past the first recheck (every SSE_KEY_RECHECK_MS).
        body: JSON.stringify({ content: "Tell me about tides.\n@reply-chars 1250\n@stream-pace 300" }),
      }),
      { ...env, DB: laggingReplica(env.DB, "api_keys") } as Env,
      ctx,
    );
    expect(res.status).toBe(200);
    expect(SSE_KEY_RECHECK_MS).toBeLessThan(7_000);
    const real = Date.now.bind(Date);
    // The auth cache's minute lapses while the turn streams.
    const spy = vi.spyOn(Date, "now").mockImplementation(() => real() + 61_000);
    try {
      const text = await res.text();
      await waitOnExecutionContext(ctx);
      expect(text).not.toContain("authentication_error");
      expect(text).toContain("event: turn_end");
      expect((await api("GET", "/v1/keys", undefined, { key: fresh })).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
  }, 60_000);
});
