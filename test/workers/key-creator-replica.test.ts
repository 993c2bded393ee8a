// A key that expires never makes one that outlives it, even when the request's D1 session is on a
// replica that has not yet seen the calling key (a client's bookmark may start it anywhere).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, newTenant } from "./helpers";
import { laggingReplica } from "./lagging-replica";

async function createWith(key: string, body: unknown, bookmark: string) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request("http://chat.test/v1/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-d1-bookmark": bookmark },
      body: JSON.stringify(body),
    }),
    { ...env, DB: laggingReplica(env.DB, "api_keys") } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return {
    status: res.status,
    json: (await res.json()) as { key?: { expiresAt: string | null }; error?: { message: string } },
  };
}

describe("a key's own expiry, read at the primary", () => {
  it("refuses a never-expiring key asked for by an expiring key, whatever replica the session starts on", async () => {
    const tenantKey = await newTenant();
    const ends = new Date(Date.now() + 3_600_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    expect(made.status).toBe(201);
    const short = made.json.apiKey;
    const bookmark = made.headers.get("x-d1-bookmark")!;
    const forever = await createWith(short, { name: "forever" }, bookmark);
    expect(forever.status, JSON.stringify(forever.json)).toBe(400);
    expect(forever.json.error?.message).toMatch(/^expiresAt: /);
    const within = await createWith(short, { name: "within", expiresAt: ends }, bookmark);
    expect(within.status, JSON.stringify(within.json)).toBe(201);
    expect(within.json.key?.expiresAt).toBe(ends);
  });
});
