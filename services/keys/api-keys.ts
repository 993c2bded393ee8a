// A tenant's API keys in D1: create, list, revoke. The secret exists only in the creating
// response; D1 keeps its SHA-256 digest and its last four characters (to tell keys apart).
// Both limits that depend on the other keys (the active-key cap, keeping one key) are part of the
// single write statement, so concurrent requests cannot step past them.
import { and, count, desc, eq, exists, gt, gte, isNull, lt, ne, or, sql } from "drizzle-orm";
import { alias, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { drizzle } from "drizzle-orm/d1";
import { apiKeys, tenants } from "../../db/schema";
import { isId, randomToken, sha256Hex, sortableId } from "../../core/ids";

/** Enough for one key per deployment, service and person; past it, revoke before creating. */
export const MAX_ACTIVE_KEYS = 100;

/**
 * The latest expiry a key may have: its ISO string keeps the four-digit year, so the SQL checks
 * that compare expiries as text (keyActiveAt, activeKeysOf) order it as the time it is.
 */
export const LATEST_EXPIRY = "9999-12-31T23:59:59.999Z";

export interface KeyRecord {
  id: string;
  name: string | null;
  last4: string | null;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export const newSecret = (): string => `ck_${randomToken(32)}`;

/** Key ids in paths: sortable ids, and the dev tenant's fixed one. */
export const isKeyId = (v: string): boolean => isId("key", v) || v === "key_dev";
export const isTenantId = (v: string): boolean => isId("ten", v) || v === "dev";

export async function keyRow(
  tenantId: string,
  {
    secret,
    name,
    expiresAt,
    createdAt,
  }: { secret: string; name: string | null; expiresAt: string | null; createdAt: string },
) {
  return {
    id: sortableId("key"),
    tenantId,
    keyHash: await sha256Hex(secret),
    last4: secret.slice(-4),
    name,
    expiresAt,
    createdAt,
  };
}

const record = {
  id: apiKeys.id,
  name: apiKeys.name,
  last4: apiKeys.last4,
  createdAt: apiKeys.createdAt,
  expiresAt: apiKeys.expiresAt,
  revokedAt: apiKeys.revokedAt,
};

/** The key being revoked, as its own table reference inside the statement that counts the others. */
const revoked = alias(apiKeys, "revoked_key");
/**
 * A key row's condition of being active at `nowIso`: not revoked, and no expiry or one still ahead
 * (ISO strings of one format compare as times). For `apiKeys` or an alias of it.
 */
export const keyActiveAt = (keys: { revokedAt: SQLiteColumn; expiresAt: SQLiteColumn }, nowIso: string) =>
  and(isNull(keys.revokedAt), or(isNull(keys.expiresAt), gt(keys.expiresAt, nowIso)));

/** The key making the request, as its own table reference inside the statement that writes. */
const caller = alias(apiKeys, "caller_key");

/**
 * The calling key's row while it is active (not revoked, not expired at `nowIso`). A key revoked
 * in another data center is still accepted here from the auth cache for up to AUTH_CACHE_MS; as a
 * condition of the write itself this keeps such a key from minting a key or revoking one.
 */
const activeCaller = (
  db: D1Database,
  { tenantId, keyId, nowIso }: { tenantId: string; keyId: string; nowIso: string },
) =>
  drizzle(db)
    .select({ id: caller.id })
    .from(caller)
    .where(and(eq(caller.id, keyId), eq(caller.tenantId, tenantId), keyActiveAt(caller, nowIso)));

/** Whether the key is active at `now`, read where `db` reads (the primary, for the binding itself). */
async function callerIsActive(db: D1Database, who: { tenantId: string; keyId: string; now: Date }): Promise<boolean> {
  return !!(await activeCaller(db, { ...who, nowIso: who.now.toISOString() }).get());
}

/**
 * The tenant's active keys (not revoked, not expired at `nowIso`; ISO strings of one format
 * compare as times) other than `exceptId`. With `outlasting`, only those that last at least as
 * long as `exceptId` does: a key that never expires is outlasted only by another that never
 * expires. Revoking a key must leave the tenant one of these, or a short-lived key could revoke
 * the lasting one (or it revoke itself) and the tenant be shut out when the short one ends. Read
 * inside the statement that writes, so its own expiry is too.
 */
const activeKeysOf = (
  db: D1Database,
  {
    tenantId,
    nowIso,
    exceptId = "",
    outlasting = false,
  }: { tenantId: string; nowIso: string; exceptId?: string; outlasting?: boolean },
) =>
  drizzle(db)
    .select({ n: count() })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.tenantId, tenantId),
        ne(apiKeys.id, exceptId),
        isNull(apiKeys.revokedAt),
        or(
          isNull(apiKeys.expiresAt),
          and(
            gt(apiKeys.expiresAt, nowIso),
            // NULL (the revoked key never expires) compares as unknown: only a lasting key outlasts it.
            outlasting
              ? gte(
                  apiKeys.expiresAt,
                  sql`(${drizzle(db).select({ e: revoked.expiresAt }).from(revoked).where(eq(revoked.id, exceptId))})`,
                )
              : undefined,
          ),
        ),
      ),
    );

export async function tenantExists(db: D1Database, tenantId: string): Promise<boolean> {
  if (!isTenantId(tenantId)) return false;
  return !!(await drizzle(db).select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).get());
}

/** The id of the tenant named `name`, or null: what a create refused over its name points the operator at. */
export async function tenantIdNamed(db: D1Database, name: string): Promise<string | null> {
  const row = await drizzle(db).select({ id: tenants.id }).from(tenants).where(eq(tenants.name, name)).get();
  return row?.id ?? null;
}

/**
 * Why a key expiring at `creatorExpiresAt` may not make one expiring at `expiresAt` (null: never),
 * or null when it may: a key never makes one that outlives it, or a short-lived key could mint a
 * permanent one. The operator's admin token is no key and is not bound by this.
 */
export function outlivesCreator(creatorExpiresAt: string | null, expiresAt: string | null): string | null {
  if (creatorExpiresAt === null) return null;
  const why = `the key making this one expires at ${creatorExpiresAt}, and a key cannot make one that outlives it`;
  if (expiresAt === null) return `expiresAt: required, at or before ${creatorExpiresAt}: ${why}`;
  return Date.parse(expiresAt) > Date.parse(creatorExpiresAt)
    ? `expiresAt: must be at or before ${creatorExpiresAt}: ${why}`
    : null;
}

/**
 * A new key for the tenant, or "limit" when it already has MAX_ACTIVE_KEYS active keys, or
 * "creator_gone" when `creatorId` (the key asking; none for the operator) is no longer active.
 * `primary` reads at the primary (default `db`, for the binding itself): after a refused insert,
 * whether the creator is still active is read there, as the insert did; a request's session may
 * be on a replica that has not seen a key made a moment ago, and would call it gone.
 */
export async function createKey(
  db: D1Database,
  {
    tenantId,
    name,
    expiresAt,
    creatorId = null,
    now = new Date(),
    primary = db,
  }: {
    tenantId: string;
    name: string | null;
    expiresAt: string | null;
    creatorId?: string | null;
    now?: Date;
    primary?: D1Database;
  },
): Promise<{ key: KeyRecord; apiKey: string } | "limit" | "creator_gone"> {
  const apiKey = newSecret();
  const row = await keyRow(tenantId, {
    secret: apiKey,
    name,
    expiresAt,
    createdAt: now.toISOString(),
  });
  // INSERT ... SELECT from the tenant's own row, so the cap is checked in the inserting statement.
  const inserted = await drizzle(db)
    .insert(apiKeys)
    .select((qb) =>
      qb
        .select({
          id: sql<string>`${row.id}`.as("id"),
          tenantId: tenants.id,
          keyHash: sql<string>`${row.keyHash}`.as("key_hash"),
          createdAt: sql<string>`${row.createdAt}`.as("created_at"),
          revokedAt: sql<null>`NULL`.as("revoked_at"),
          name: sql<string | null>`${row.name}`.as("name"),
          last4: sql<string>`${row.last4}`.as("last4"),
          expiresAt: sql<string | null>`${row.expiresAt}`.as("expires_at"),
        })
        .from(tenants)
        .where(
          and(
            eq(tenants.id, tenantId),
            lt(activeKeysOf(db, { tenantId, nowIso: row.createdAt }), MAX_ACTIVE_KEYS),
            creatorId ? exists(activeCaller(db, { tenantId, keyId: creatorId, nowIso: row.createdAt })) : undefined,
          ),
        ),
    );
  if (!inserted.meta.changes) {
    // A key once revoked or expired stays so: read after the refusal, its state is the one the insert saw.
    if (creatorId && !(await callerIsActive(primary, { tenantId, keyId: creatorId, now }))) return "creator_gone";
    return "limit";
  }
  return {
    key: {
      id: row.id,
      name: row.name,
      last4: row.last4,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      revokedAt: null,
    },
    apiKey,
  };
}

/** The tenant's keys, newest first, revoked ones included (they stay listed with revokedAt). */
export async function listKeys(
  db: D1Database,
  { tenantId, limit, cursor }: { tenantId: string; limit: number; cursor?: string },
): Promise<KeyRecord[]> {
  return drizzle(db)
    .select(record)
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), cursor ? lt(apiKeys.id, cursor) : undefined))
    .orderBy(desc(apiKeys.id))
    .limit(limit)
    .all();
}

export async function getKey(db: D1Database, tenantId: string, keyId: string): Promise<KeyRecord | null> {
  if (!isKeyId(keyId)) return null;
  return (
    (await drizzle(db)
      .select(record)
      .from(apiKeys)
      .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, keyId)))
      .get()) ?? null
  );
}

export type RevokeOutcome = { key: KeyRecord; revokedHash: string | null } | "not_found" | "last_key" | "caller_gone";

/**
 * Revokes the tenant's key. Revoking a revoked key changes nothing and answers it as it is.
 * Unless `allowLast`, the tenant's last active key stays: "last_key". With `callerId` (the key
 * asking; none for the operator), only while that key is active: "caller_gone" otherwise.
 * `primary` reads at the primary (default `db`, for the binding itself): the reads after the update
 * (the caller's state, the key's) are made there, where the update decided, not on a replica of the
 * request's session that may not have seen a key made a moment ago.
 */
export async function revokeKey(
  db: D1Database,
  {
    tenantId,
    keyId,
    allowLast,
    callerId = null,
    now = new Date(),
    primary = db,
  }: {
    tenantId: string;
    keyId: string;
    allowLast: boolean;
    callerId?: string | null;
    now?: Date;
    primary?: D1Database;
  },
): Promise<RevokeOutcome> {
  const nowIso = now.toISOString();
  const callerGone = async () => !!callerId && !(await callerIsActive(primary, { tenantId, keyId: callerId, now }));
  if (!isKeyId(keyId)) return (await callerGone()) ? "caller_gone" : "not_found";
  const keepsOne = allowLast
    ? undefined
    : gt(activeKeysOf(db, { tenantId, nowIso, exceptId: keyId, outlasting: true }), 0);
  // The caller's own row is read in the statement, before it writes: a key revoking itself passes.
  const callerActive = callerId ? exists(activeCaller(db, { tenantId, keyId: callerId, nowIso })) : undefined;
  const revoked = await drizzle(db)
    .update(apiKeys)
    .set({ revokedAt: nowIso })
    .where(
      and(eq(apiKeys.id, keyId), eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt), keepsOne, callerActive),
    )
    .returning({ keyHash: apiKeys.keyHash });
  // Nothing written by a key gone meanwhile: no answer about the key either (revoked or not).
  if (!revoked.length && (await callerGone())) return "caller_gone";
  const key = await getKey(primary, tenantId, keyId);
  if (!key) return "not_found";
  if (revoked.length) return { key, revokedHash: revoked[0].keyHash };
  return key.revokedAt ? { key, revokedHash: null } : "last_key";
}
