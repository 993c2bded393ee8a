// A key made a moment ago, used with an older bookmark (a replica that has not seen it yet): when
// its write changes nothing, the reads that tell why (is the caller still active, the key's state)
// are at the primary, so an active key gets the documented 409 or 200, never a 401 or a 404.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { apiKeys } from "../../db/schema";
import { keyRow, MAX_ACTIVE_KEYS, newSecret } from "../../services/keys/api-keys";
import { app } from "../../workers/chat/app";
import { api, newTenantWithId } from "./helpers";
import { laggingReplica } from "./lagging-replica";

/** Reads of api_keys, aliased or not, see no rows in bookmark-started sessions (a replica behind the new keys). */
const lagging = (real: D1Database): D1Database => laggingReplica(real, "api_keys");

async function call(req: { method: string; path: string; key: string; bookmark: string; body?: unknown }) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${req.path}`, {
      method: req.method,
      headers: {
        authorization: `Bearer ${req.key}`,
        "content-type": "application/json",
        "x-d1-bookmark": req.bookmark,
      },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
    }),
    { ...env, DB: lagging(env.DB) } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as { error?: { type: string } } };
}

type Made = { apiKey: string; key: { id: string } };

/** A tenant, a bookmark from before its later keys, and a key made after that bookmark. */
async function tenantWithFreshKey() {
  const t = await newTenantWithId();
  const listed = await api("GET", "/v1/keys", undefined, { key: t.key });
  const bookmark = listed.headers.get("x-d1-bookmark")!;
  const firstId = (listed.json.data as { id: string }[])[0].id;
  const fresh = (await api("POST", "/v1/keys", { name: "fresh" }, { key: t.key })).json as Made;
  return { ...t, bookmark, firstId, fresh };
}

describe("a fresh key with an older bookmark, after a write that changed nothing", () => {
  it("re-revoking a revoked key answers 200, revoking the last lasting key 409", async () => {
    const t = await tenantWithFreshKey();
    const other = (await api("POST", "/v1/keys", { name: "other" }, { key: t.key })).json as Made;
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    expect((await api("DELETE", `/v1/keys/${t.firstId}`, undefined, { key: t.fresh.apiKey })).status).toBe(200);
    // fresh is now the tenant's only active key.
    const again = await call({
      method: "DELETE",
      path: `/v1/keys/${other.key.id}`,
      key: t.fresh.apiKey,
      bookmark: t.bookmark,
    });
    expect(again.status, again.text).toBe(200);
    const self = await call({
      method: "DELETE",
      path: `/v1/keys/${t.fresh.key.id}`,
      key: t.fresh.apiKey,
      bookmark: t.bookmark,
    });
    expect(self.status, self.text).toBe(409);
    expect(self.json.error?.type).toBe("conflict");
    const bogus = await call({ method: "DELETE", path: "/v1/keys/nope", key: t.fresh.apiKey, bookmark: t.bookmark });
    expect(bogus.status, bogus.text).toBe(404);
    expect((await api("GET", "/v1/keys", undefined, { key: t.fresh.apiKey })).status).toBe(200);
  });

  it("a tenant at its cap answers 409, not 401", async () => {
    const t = await tenantWithFreshKey();
    // The rest of the cap, written straight to D1: two keys exist (the first and fresh).
    const now = new Date().toISOString();
    const rows = await Promise.all(
      Array.from({ length: MAX_ACTIVE_KEYS - 2 }, (_, i) =>
        keyRow(t.tenantId, { secret: newSecret(), name: `k${i}`, expiresAt: null, createdAt: now }),
      ),
    );
    for (let i = 0; i < rows.length; i += 10)
      await drizzle(env.DB)
        .insert(apiKeys)
        .values(rows.slice(i, i + 10));
    const over = await call({
      method: "POST",
      path: "/v1/keys",
      key: t.fresh.apiKey,
      bookmark: t.bookmark,
      body: { name: "one too many" },
    });
    expect(over.status, over.text).toBe(409);
    expect(over.json.error?.type).toBe("conflict");
  });

  it("a caller revoked at the primary but still cached here is still a 401", async () => {
    const t = await tenantWithFreshKey();
    expect((await api("GET", "/v1/keys", undefined, { key: t.fresh.apiKey })).status).toBe(200);
    // Another data center's revocation: D1 has it, this isolate's auth cache does not.
    await drizzle(env.DB)
      .update(apiKeys)
      .set({ revokedAt: new Date().toISOString() })
      .where(eq(apiKeys.id, t.fresh.key.id));
    const gone = await call({
      method: "DELETE",
      path: `/v1/keys/${t.firstId}`,
      key: t.fresh.apiKey,
      bookmark: t.bookmark,
    });
    expect(gone.status, gone.text).toBe(401);
    expect(gone.json.error?.type).toBe("authentication_error");
  });
});
