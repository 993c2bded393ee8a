// The D1 listing of a tenant's conversations (drizzle). The Durable Object is the source of truth;
// these rows are kept current after each turn so listing never has to wake every conversation.
// Beside them, the create keys: a keyed POST /v1/conversations's key and the conversation it made.
import { and, desc, eq, gt, lt, lte, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { IDEMPOTENCY_TTL_MS } from "../core/idempotency-key";
import { conversationCreateKeys, conversations } from "../db/schema";
import { isUniqueViolation } from "./d1-batch";
import { forgetMapsNaming, forgetMemoryMap } from "./memory/memory-map";
import { usageInsert, type UsageEvent } from "./usage";

export type ConversationRow = typeof conversations.$inferSelect;
export type CreateKeyRow = typeof conversationCreateKeys.$inferSelect;
/** A create's `Idempotency-Key` and the digest of the request it came with. */
export interface CreateKey {
  key: string;
  fingerprint: string;
}

export async function insertConversationRow(db: D1Database, row: ConversationRow): Promise<void> {
  await drizzle(db).insert(conversations).values(row);
}

export async function deleteConversationRow(db: D1Database, id: string): Promise<void> {
  await drizzle(db).delete(conversations).where(eq(conversations.id, id));
}

/** Whether the tenant's listing has the conversation (a purge removes its row). */
export async function conversationRowExists(
  db: D1Database,
  ref: { tenantId: string; conversationId: string },
): Promise<boolean> {
  const rows = await drizzle(db)
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.tenantId, ref.tenantId), eq(conversations.id, ref.conversationId)))
    .limit(1);
  return rows.length > 0;
}

const keyCutoff = (now: number) => new Date(now - IDEMPOTENCY_TTL_MS).toISOString();
const keyOf = (tenantId: string, key: string) =>
  and(eq(conversationCreateKeys.tenantId, tenantId), eq(conversationCreateKeys.key, key));

/** The tenant's row for a create key, unless it is older than IDEMPOTENCY_TTL_MS (then it counts as absent). */
export async function readCreateKey(
  db: D1Database,
  { tenantId, key, now = Date.now() }: { tenantId: string; key: string; now?: number },
): Promise<CreateKeyRow | null> {
  const rows = await drizzle(db)
    .select()
    .from(conversationCreateKeys)
    .where(and(keyOf(tenantId, key), gt(conversationCreateKeys.createdAt, keyCutoff(now))))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * A keyed create's listing row and its key's row, in one batch (one transaction): first the
 * tenant's expired key rows go (an index range: each keyed create pays only for what has just
 * expired, the key's own old row included), then the key's row, whose (tenant_id, key) primary key
 * refuses a second one, then the listing row. False, with nothing written, when another create
 * holds the key: the unique constraint decides between concurrent creates.
 */
export async function insertKeyedConversationRow(
  db: D1Database,
  row: ConversationRow,
  createKey: CreateKey,
): Promise<boolean> {
  const d = drizzle(db);
  const { tenantId, id: conversationId, createdAt } = row;
  try {
    await d.batch([
      d
        .delete(conversationCreateKeys)
        .where(
          and(
            eq(conversationCreateKeys.tenantId, tenantId),
            lte(conversationCreateKeys.createdAt, keyCutoff(Date.parse(createdAt))),
          ),
        ),
      d.insert(conversationCreateKeys).values({ tenantId, ...createKey, conversationId, createdAt }),
      d.insert(conversations).values(row),
    ]);
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/**
 * Housekeeping of the cron tick (every 5 minutes): every tenant's create keys past their 24 hours. A tenant's own
 * keyed create removes only its own expired keys, so a tenant that stops sending them would keep
 * its rows for good; this reads the expired rows alone (an index by `created_at`, migration 0025).
 */
export async function sweepExpiredCreateKeys(db: D1Database, now: number): Promise<number> {
  const res = await drizzle(db)
    .delete(conversationCreateKeys)
    .where(lte(conversationCreateKeys.createdAt, keyCutoff(now)));
  return res.meta.changes ?? 0;
}

/** Undoes insertKeyedConversationRow when the object could not be created: the key is free again. */
export async function deleteKeyedConversationRow(
  db: D1Database,
  row: { tenantId: string; key: string; conversationId: string },
): Promise<void> {
  const d = drizzle(db);
  await d.batch([
    d
      .delete(conversationCreateKeys)
      .where(and(keyOf(row.tenantId, row.key), eq(conversationCreateKeys.conversationId, row.conversationId))),
    d.delete(conversations).where(eq(conversations.id, row.conversationId)),
  ]);
}

export async function updateConversationRow(
  db: D1Database,
  id: string,
  fields: Partial<Pick<ConversationRow, "title" | "updatedAt" | "messageCount">>,
): Promise<void> {
  await conversationRowUpdate(drizzle(db), id, fields);
}

function conversationRowUpdate(
  d: ReturnType<typeof drizzle>,
  id: string,
  fields: Partial<Pick<ConversationRow, "title" | "updatedAt" | "messageCount">>,
) {
  return d.update(conversations).set(fields).where(eq(conversations.id, id));
}

/** After a turn: the listing row and the turn's usage rows, in one D1 round trip. */
export async function refreshConversationRow(
  db: D1Database,
  {
    id,
    fields,
    usage,
    forgetMemoryMapOf,
    formerTitles,
  }: {
    id: string;
    fields: Partial<Pick<ConversationRow, "title" | "updatedAt" | "messageCount">>;
    usage: readonly UsageEvent[];
    /** The tenant whose stored memory maps are forgotten after this write: a title they may hold changed. */
    forgetMemoryMapOf?: string;
    /** The titles the conversation had: only the maps naming a word of one are forgotten (forgetMapsNaming). */
    formerTitles?: readonly string[];
  },
): Promise<void> {
  const d = drizzle(db);
  await d.batch([conversationRowUpdate(d, id, fields), ...usage.map((u) => usageInsert(d, u))]);
  // After the title is written: a map computed in between reads the new title (and is forgotten
  // too). A failure throws, and the outbox's next run writes the row and forgets again.
  if (forgetMemoryMapOf && formerTitles) await forgetMapsNaming(db, forgetMemoryMapOf, formerTitles);
  else if (forgetMemoryMapOf) await forgetMemoryMap(db, forgetMemoryMapOf).run();
}

/** Newest first (ids sort by creation time); `before` is the last id of the previous page. */
export async function listConversationRows(
  db: D1Database,
  { tenantId, limit, before }: { tenantId: string; limit: number; before?: string },
): Promise<ConversationRow[]> {
  const where = before
    ? and(eq(conversations.tenantId, tenantId), lt(conversations.id, before))
    : eq(conversations.tenantId, tenantId);
  return drizzle(db).select().from(conversations).where(where).orderBy(desc(conversations.id)).limit(limit);
}

/** Where an `?order=activity` page ended: the last row's `updatedAt` and `id` (ties broken by id). */
export interface ActivityCursor {
  updatedAt: string;
  id: string;
}

const ACTIVITY_CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z)~(conv_[A-Za-z0-9_-]{1,100})$/;

/** `<updatedAt>~<id>`, what `next` holds in `?order=activity`. */
export const activityCursor = (row: Pick<ConversationRow, "updatedAt" | "id">) => `${row.updatedAt}~${row.id}`;

export function parseActivityCursor(raw: string): ActivityCursor | null {
  const m = ACTIVITY_CURSOR.exec(raw);
  // A time that exists: "2026-13-45T99:99:99Z" has the shape and names no moment.
  return m && sameMoment(m[1]) ? { updatedAt: m[1], id: m[2] } : null;
}

/** The text reads back as itself (to the millisecond): its date and time exist. */
function sameMoment(iso: string): boolean {
  const t = Date.parse(iso);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 19) === iso.slice(0, 19);
}

/**
 * Most recent activity first (`updated_at`, then id, both descending: the index
 * conversations_tenant_activity, so no scan and no sort); `after` is where the previous page ended.
 */
export async function listConversationRowsByActivity(
  db: D1Database,
  { tenantId, limit, after }: { tenantId: string; limit: number; after?: ActivityCursor },
): Promise<ConversationRow[]> {
  return activityPageQuery(db, { tenantId, limit, after });
}

/** The query itself (tests read its plan). */
export function activityPageQuery(
  db: D1Database,
  { tenantId, limit, after }: { tenantId: string; limit: number; after?: ActivityCursor },
) {
  const tenant = eq(conversations.tenantId, tenantId);
  const where = after
    ? and(tenant, sql`(${conversations.updatedAt}, ${conversations.id}) < (${after.updatedAt}, ${after.id})`)
    : tenant;
  return drizzle(db)
    .select()
    .from(conversations)
    .where(where)
    .orderBy(desc(conversations.updatedAt), desc(conversations.id))
    .limit(limit);
}
