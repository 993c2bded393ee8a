// API-key authentication. Keys are stored as SHA-256 digests; a lookup result is cached in the
// isolate for a minute so a busy key costs one D1 read a minute, not one per request.
import { and, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { apiKeys, tenants } from "../../db/schema";
import { randomToken, sha256Hex, sortableId } from "../../core/ids";

const CACHE_MS = 60_000;
const cache = new Map<string, { tenantId: string | null; until: number }>();

export const DEV_TENANT_ID = "dev";
const DEV_DEFAULT_KEY = "dev-local-key";
const DEV_DEFAULT_ADMIN = "dev-admin-token";

export const isLocalDev = (env: Env): boolean => env.DEV_BOOTSTRAP === "true";

export function adminToken(env: Env): string | null {
  return env.ADMIN_TOKEN || (isLocalDev(env) ? DEV_DEFAULT_ADMIN : null);
}

/** Tenant id for a presented API key, or null. */
export async function tenantForKey(env: Env, key: string): Promise<string | null> {
  if (!key) return null;
  await ensureDevTenant(env);
  const hash = await sha256Hex(key);
  const hit = cache.get(hash);
  if (hit && hit.until > Date.now()) return hit.tenantId;
  const row = await drizzle(env.DB)
    .select({ tenantId: apiKeys.tenantId })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .get();
  const tenantId = row?.tenantId ?? null;
  if (cache.size > 10_000) cache.clear();
  cache.set(hash, { tenantId, until: Date.now() + CACHE_MS });
  return tenantId;
}

/** Creates a tenant and its first key; the plaintext key is returned once and never stored. */
export async function createTenant(env: Env, name: string): Promise<{ tenant: { id: string; name: string; createdAt: string }; apiKey: string } | null> {
  const db = drizzle(env.DB);
  const existing = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.name, name)).get();
  if (existing) return null;
  const tenant = { id: sortableId("ten"), name, createdAt: new Date().toISOString() };
  const apiKey = `ck_${randomToken(32)}`;
  await db.batch([
    db.insert(tenants).values(tenant),
    db.insert(apiKeys).values({ id: sortableId("key"), tenantId: tenant.id, keyHash: await sha256Hex(apiKey), createdAt: tenant.createdAt }),
  ]);
  return { tenant, apiKey };
}

let devBootstrap: Promise<void> | null = null;

/** Under local dev only: the tenant "dev" with DEV_API_KEY (default "dev-local-key"). Idempotent. */
export function ensureDevTenant(env: Env): Promise<void> {
  if (!isLocalDev(env)) return Promise.resolve();
  devBootstrap ??= (async () => {
    const db = drizzle(env.DB);
    const now = new Date().toISOString();
    await db.insert(tenants).values({ id: DEV_TENANT_ID, name: "dev", createdAt: now }).onConflictDoNothing();
    const keyHash = await sha256Hex(env.DEV_API_KEY || DEV_DEFAULT_KEY);
    await db.insert(apiKeys).values({ id: "key_dev", tenantId: DEV_TENANT_ID, keyHash, createdAt: now }).onConflictDoUpdate({ target: apiKeys.id, set: { keyHash } });
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
