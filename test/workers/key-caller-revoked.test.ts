// A key that another data center revoked (or that expired) may still be accepted here for up to
// AUTH_CACHE_MS from its cache entry; it must not mint a key or revoke one in that time. The
// routes' writes carry the caller's own row as a condition, read at the primary in the same statement.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../services/keys/api-keys";
import { api, newTenantWithId } from "./helpers";

type Made = { apiKey: string; key: { id: string } };

/** A tenant with its first key (the owner), a lasting spare, and a second key that has been used (so it is cached). */
async function tenantWithCachedKey() {
  const { tenantId, key: owner } = await newTenantWithId();
  const listed = await api("GET", "/v1/keys", undefined, { key: owner });
  const ownerId = (listed.json.data as { id: string; current?: boolean }[]).find((k) => k.current)!.id;
  // A spare that lasts as long as the owner's key, so the last-key rule alone would let the owner's go.
  expect((await api("POST", "/v1/keys", { name: "spare" }, { key: owner })).status).toBe(201);
  const second = (await api("POST", "/v1/keys", { name: "second" }, { key: owner })).json as Made;
  expect((await api("GET", "/v1/keys", undefined, { key: second.apiKey })).status).toBe(200);
  return { tenantId, owner, ownerId, second };
}

async function keyCount(keyHolder: string): Promise<number> {
  return (await api("GET", "/v1/keys", undefined, { key: keyHolder })).json.data.length;
}

describe("a key gone at the primary but still cached here", () => {
  for (const [how, column] of [
    ["revoked", "revoked_at"],
    ["expired", "expires_at"],
  ] as const) {
    it(`${how}: cannot create a key nor revoke the owner's`, async () => {
      const { owner, ownerId, second } = await tenantWithCachedKey();
      // Another data center's revocation (or the key's end): D1 has it, this colo's cache does not.
      await env.DB.prepare(`UPDATE api_keys SET ${column} = ? WHERE id = ?`)
        .bind(new Date(Date.now() - 1000).toISOString(), second.key.id)
        .run();
      // Still accepted for a read from the cache: what the bound on revocation allows.
      expect((await api("GET", "/v1/keys", undefined, { key: second.apiKey })).status).toBe(200);
      const before = await keyCount(owner);
      const minted = await api("POST", "/v1/keys", { name: "forever" }, { key: second.apiKey });
      expect(minted.status, minted.text).toBe(401);
      expect(minted.json.error?.type).toBe("authentication_error");
      expect(await keyCount(owner)).toBe(before);
      const revoked = await api("DELETE", `/v1/keys/${ownerId}`, undefined, { key: second.apiKey });
      expect(revoked.status, revoked.text).toBe(401);
      expect(revoked.json.error?.type).toBe("authentication_error");
      // Revoking itself again, or any key already revoked, is no way around it either.
      const again = await api("DELETE", `/v1/keys/${second.key.id}`, undefined, { key: second.apiKey });
      expect(again.status, again.text).toBe(401);
      expect((await api("GET", "/v1/conversations", undefined, { key: owner })).status).toBe(200);
      const ownerRow = await env.DB.prepare(`SELECT revoked_at AS r FROM api_keys WHERE id = ?`)
        .bind(ownerId)
        .first<{ r: string | null }>();
      expect(ownerRow?.r).toBeNull();
    });
  }

  it("an active key still creates and revokes, itself included", async () => {
    const { owner, second } = await tenantWithCachedKey();
    const third = await api("POST", "/v1/keys", { name: "third" }, { key: second.apiKey });
    expect(third.status, third.text).toBe(201);
    const self = await api("DELETE", `/v1/keys/${second.key.id}`, undefined, { key: second.apiKey });
    expect(self.status, self.text).toBe(200);
    expect(self.json.key.id).toBe(second.key.id);
    expect((await api("GET", "/v1/keys", undefined, { key: owner })).status).toBe(200);
  });

  it("the writes themselves refuse a caller revoked after the route read its row", async () => {
    const { tenantId, ownerId, second } = await tenantWithCachedKey();
    await env.DB.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`)
      .bind(new Date().toISOString(), second.key.id)
      .run();
    const made = await createKey(env.DB, { tenantId, name: "late", expiresAt: null, creatorId: second.key.id });
    expect(made).toBe("creator_gone");
    const gone = await revokeKey(env.DB, { tenantId, keyId: ownerId, allowLast: false, callerId: second.key.id });
    expect(gone).toBe("caller_gone");
    // The operator (no calling key) is not bound by it.
    expect(await createKey(env.DB, { tenantId, name: "op", expiresAt: null })).toHaveProperty("apiKey");
  });
});
