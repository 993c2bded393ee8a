// Everything a conversation owns outside its Durable Object, removed: its cortex rows (messages,
// attachment pages, episodes), its episodes, websocket tickets, listing row and any channel's
// pointer to it, the tenant's stored memory maps that name its title, its attachments (bytes,
// pages, rows), its prompt snapshots, and last its record in R2 (head and batches).
// Every step is idempotent, so the DO's tombstone can run it again after a crash. The first steps,
// the cortex rows and the listing row (unlistConversation), the object also runs on their own as
// soon as its delete begins (durable-objects/conversation/conversation-delete.ts).
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversations, memoryEpisodes } from "../db/schema";
import { conversationPrefix, promptSnapshotPrefix } from "../r2-layout";
import { purgeAttachmentsOf } from "./attachments/delete";
import { d1Statement } from "./d1-batch";
import { cortexFor } from "./cortex/routing";
import { deleteR2Prefix } from "./purge";
import { forgetMapGeneration, forgetMemoryMap, forgetStoredMapsNaming } from "./memory/memory-map";

/**
 * What a purge knows of the conversation beyond its ids: `title`, the one a purge cut short read
 * before its listing row went (kept in the tombstone), and `keepTitle`, told the title this purge
 * reads with that row, so a purge resumed after it still forgets only the maps naming it.
 */
export interface PurgeTarget {
  tenantId: string;
  conversationId: string;
  title?: string;
  keepTitle?: (title: string) => void;
}

export async function purgeConversation(env: Env, target: PurgeTarget): Promise<void> {
  const { tenantId, conversationId } = target;
  // Run again though the delete ran it as it began: a write in flight then (an index write, an
  // episode) may have put rows back. The R2 steps (attachments, snapshots, the record) come after,
  // so a purge cut short there lists nothing.
  await unlistConversation(env, target);
  await purgeAttachmentsOf(env, tenantId, { conversationId });
  await deleteR2Prefix(env.BUCKET, promptSnapshotPrefix(tenantId, conversationId));
  await deleteR2Prefix(env.BUCKET, conversationPrefix(tenantId, conversationId));
}

/**
 * What the routes that read without the object find of the conversation: its cortex rows first,
 * then its listing row (with its episodes, websocket tickets, a channel's pointer, and the stored
 * memory maps naming its title). Search and the listings answer as if it never existed once this
 * ran; a delete in progress must, from its start. Idempotent.
 */
export async function unlistConversation(env: Env, target: PurgeTarget): Promise<void> {
  const { tenantId, conversationId } = target;
  await (await cortexFor(env, tenantId)).purgeConversation(tenantId, conversationId);
  const db = drizzle(env.DB);
  const mine = and(eq(conversations.tenantId, tenantId), eq(conversations.id, conversationId));
  const [listed] = await env.DB.batch<{ title: string }>([
    // Read in the batch that deletes the row: the title it had when it went.
    d1Statement(env.DB, db.select({ title: conversations.title }).from(conversations).where(mine)),
    d1Statement(
      env.DB,
      db
        .delete(memoryEpisodes)
        .where(and(eq(memoryEpisodes.tenantId, tenantId), eq(memoryEpisodes.conversationId, conversationId))),
    ),
    env.DB.prepare(`DELETE FROM ws_tickets WHERE tenant_id = ? AND conversation_id = ?`).bind(tenantId, conversationId),
    // A channel on it lists none until its next message rotates it (ChannelDO.get answers the same).
    env.DB.prepare(`UPDATE channels SET conversation_id = NULL WHERE tenant_id = ? AND conversation_id = ?`).bind(
      tenantId,
      conversationId,
    ),
    d1Statement(env.DB, db.delete(conversations).where(mine)),
    // With the row: a memory map computed from titles read before the delete is not stored after it.
    forgetMapGeneration(env.DB, tenantId),
  ]);
  // Its title may be among the stored maps' topics: only the maps naming a word of it go (as after
  // a rename), so the others stay, and with them every other conversation's cached prompt prefix.
  // An untitled conversation names none. No row (a purge resumed after the batch above ran): the
  // title its first run kept, else (unknown) every map goes.
  const read = listed.results[0]?.title;
  if (read !== undefined) target.keepTitle?.(read);
  const title = read ?? target.title;
  if (title === undefined) await forgetMemoryMap(env.DB, tenantId).run();
  else await forgetStoredMapsNaming(env.DB, tenantId, [title]);
}
