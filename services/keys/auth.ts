// API-key authentication. Keys are stored as SHA-256 digests; a lookup result is cached in two
// layers — the isolate (isolate-key-cache.ts), then the data center's Cache API (edge-key-cache.ts)
// — both until the same `until`, at most AUTH_CACHE_MS after the D1 read, so a busy key costs one D1
// read per colo a minute, not one per request. That TTL is also the bound on revocation: the
// revoking isolate refuses the key at once and leaves a tombstone in both layers of its colo, which
// outlasts any entry a lookup begun before the revocation could still write there; the colo's other
// isolates re-read its layer every ISOLATE_RECHECK_MS, so they stop within that; every other colo
// stops accepting the key within AUTH_CACHE_MS of the read that cached it (sooner if it expires).
import { and, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { apiKeys, tenants } from "../../db/schema";
import { envConfig } from "../../core/env-config";
import { sha256Hex, sortableId } from "../../core/ids";
import { keyRow, newSecret } from "./api-keys";
import { type ActiveKey, readEdgeKey, revokeEdgeKey, writeEdgeKey } from "./edge-key-cache";
import { IsolateKeyCache } from "./isolate-key-cache";
import { isUniqueViolation } from "../d1-batch";

export const AUTH_CACHE_MS = 60_000;

// Defined beside the cache entries that hold it, so neither cache layer imports this file.
export type { ActiveKey } from "./edge-key-cache";

const cache = new IsolateKeyCache();

export const DEV_TENANT_ID = "dev";
const DEV_DEFAULT_ADMIN = "dev-admin-token";

export const isLocalDev = (env: Env): boolean => envConfig(env).DEV_BOOTSTRAP;

export function adminToken(env: Env): string | null {
  return envConfig(env).ADMIN_TOKEN ?? (isLocalDev(env) ? DEV_DEFAULT_ADMIN : null);
}

/** The active (not revoked, not expired) key with this digest, or null. `now` drives the caches' clock. */
export async function keyForHash(env: Env, keyHash: string, now = Date.now()): Promise<ActiveKey | null> {
  await ensureDevTenant(env);
  const cached = await cachedKeyForHash(keyHash, now);
  if (cached !== undefined) return cached;
  const row = await drizzle(env.DB)
    .select({ tenantId: apiKeys.tenantId, keyId: apiKeys.id, expiresAt: apiKeys.expiresAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .get();
  const expires = row?.expiresAt ? Date.parse(row.expiresAt) : Infinity;
  const key = row && expires > now ? { tenantId: row.tenantId, keyId: row.keyId } : null;
  // An active key is cached no longer than it lives; a key already expired never comes back, so
  // its "no key" is cached as long as any other (it used to cost a D1 read on every request).
  const entry = { key, until: key ? Math.min(now + AUTH_CACHE_MS, expires) : now + AUTH_CACHE_MS };
  // Revoked here while D1 answered: the answer is stale, and the colo's tombstone must stay alone.
  if (cache.revokedSince(keyHash, now)) return null;
  // A cache that fails costs a D1 read next time, never a refused request.
  await writeEdgeKey(keyHash, entry, now).catch(() => {});
  return cache.remember(keyHash, entry, now);
}

/** What this colo's caches say of the digest, without asking D1: its key, null (no active key), or undefined (not cached). */
export async function cachedKeyForHash(keyHash: string, now = Date.now()): Promise<ActiveKey | null | undefined> {
  const hit = cache.get(keyHash, now);
  if (hit) return hit.key;
  // The colo's entry keeps the `until` of the D1 read behind it, so copying it here never extends the bound.
  const edge = await readEdgeKey(keyHash, now).catch(() => null);
  return edge ? cache.remember(keyHash, edge, now) : undefined;
}

/** Tenant id for a presented API key, or null. */
export async function tenantForKey(env: Env, key: string): Promise<string | null> {
  if (!key) return null;
  return (await keyForHash(env, await sha256Hex(key)))?.tenantId ?? null;
}

/**
 * Called by the isolate that revokes a key, after D1 has it revoked, so the key stops working in its
 * colo with no delay at all. A lookup begun before now stores entries that end by now +
 * AUTH_CACHE_MS at the latest; the tombstones last that long, so no such entry is ever trusted.
 */
export async function forgetKey(keyHash: string, now = Date.now()): Promise<void> {
  cache.revoke(keyHash, now + AUTH_CACHE_MS, now);
  await revokeEdgeKey(keyHash, now + AUTH_CACHE_MS, now);
}

/** Empties this isolate's layer only (entries and tombstones), as a fresh isolate of the same colo starts (tests). */
export function forgetIsolateKeys(): void {
  cache.clear();
}

/** Creates a tenant and its first key; the plaintext key is returned once and never stored. */
export async function createTenant(
  env: Env,
  name: string,
): Promise<{ tenant: { id: string; name: string; createdAt: string }; apiKey: string } | null> {
  const db = drizzle(env.DB);
  const tenant = { id: sortableId("ten"), name, createdAt: new Date().toISOString() };
  const apiKey = newSecret();
  try {
    await db.batch([
      db.insert(tenants).values(tenant),
      db
        .insert(apiKeys)
        .values(
          await keyRow(tenant.id, { secret: apiKey, name: "default", expiresAt: null, createdAt: tenant.createdAt }),
        ),
    ]);
  } catch (err) {
    // The name is taken (UNIQUE(name)), however close together the two creates came: nothing written.
    if (isUniqueViolation(err)) return null;
    throw err;
  }
  return { tenant, apiKey };
}

let devBootstrap: Promise<void> | null = null;

/** Under local dev only: the tenant "dev" with DEV_API_KEY (default "dev-local-key"). Idempotent; never un-revokes it. */
export function ensureDevTenant(env: Env): Promise<void> {
  if (!isLocalDev(env)) return Promise.resolve();
  devBootstrap ??= (async () => {
    const db = drizzle(env.DB);
    const now = new Date().toISOString();
    await db.insert(tenants).values({ id: DEV_TENANT_ID, name: "dev", createdAt: now }).onConflictDoNothing();
    const row = {
      ...(await keyRow(DEV_TENANT_ID, {
        secret: envConfig(env).DEV_API_KEY,
        name: "dev",
        expiresAt: null,
        createdAt: now,
      })),
      id: "key_dev",
    };
    await db
      .insert(apiKeys)
      .values(row)
      .onConflictDoUpdate({ target: apiKeys.id, set: { keyHash: row.keyHash, last4: row.last4 } });
  })().catch((err) => {
    devBootstrap = null;
    throw err;
  });
  return devBootstrap;
}

/** Constant-time comparison for the admin token. */
export function safeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

export function bearer(header: string | undefined | null): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m ? m[1] : "";
}
