// The D1 listing of a tenant's conversations (drizzle). The Durable Object is the source of truth;
// these rows are kept current after each turn so listing never has to wake every conversation.
import { and, desc, eq, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversations } from "../db/schema";
import { usageInsert, type UsageEvent } from "./usage";

export type ConversationRow = typeof conversations.$inferSelect;

export async function insertConversationRow(db: D1Database, row: ConversationRow): Promise<void> {
  await drizzle(db).insert(conversations).values(row);
}

export async function deleteConversationRow(db: D1Database, id: string): Promise<void> {
  await drizzle(db).delete(conversations).where(eq(conversations.id, id));
}

export async function updateConversationRow(
  db: D1Database,
  id: string,
  fields: Partial<Pick<ConversationRow, "title" | "updatedAt" | "messageCount">>,
): Promise<void> {
  await conversationRowUpdate(drizzle(db), id, fields);
}

function conversationRowUpdate(d: ReturnType<typeof drizzle>, id: string, fields: Partial<Pick<ConversationRow, "title" | "updatedAt" | "messageCount">>) {
  return d.update(conversations).set(fields).where(eq(conversations.id, id));
}

/** After a turn: the listing row and the turn's usage rows, in one D1 round trip. */
export async function refreshConversationRow(db: D1Database, id: string, fields: Partial<Pick<ConversationRow, "title" | "updatedAt" | "messageCount">>, usage: readonly UsageEvent[]): Promise<void> {
  const d = drizzle(db);
  await d.batch([conversationRowUpdate(d, id, fields), ...usage.map((u) => usageInsert(d, u))]);
}

/** Newest first (ids sort by creation time); `before` is the last id of the previous page. */
export async function listConversationRows(db: D1Database, tenantId: string, limit: number, before?: string): Promise<ConversationRow[]> {
  const where = before ? and(eq(conversations.tenantId, tenantId), lt(conversations.id, before)) : eq(conversations.tenantId, tenantId);
  return drizzle(db).select().from(conversations).where(where).orderBy(desc(conversations.id)).limit(limit);
}
