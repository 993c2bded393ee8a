// Everything a conversation owns outside its Durable Object, removed: its cortex rows (messages,
// attachment pages, episodes), its attachments (bytes, pages, rows), its prompt snapshots, its
// episodes, websocket tickets, listing row and any channel's pointer to it, and last its record in R2 (head and batches).
// Every step is idempotent, so the DO's tombstone can run it again after a crash.
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversations, memoryEpisodes } from "../db/schema";
import { conversationPrefix, promptSnapshotPrefix } from "../r2-layout";
import { purgeAttachmentsOf } from "./attachments/delete";
import { d1Statement } from "./d1-batch";
import { cortexFor } from "./cortex/routing";
import { deleteR2Prefix } from "./purge";
import { forgetMemoryMap } from "./memory/memory-map";

export async function purgeConversation(env: Env, tenantId: string, conversationId: string): Promise<void> {
  // The cortex rows first: search is the one route that reads them without the object, and a
  // delete in progress answers as if the conversation never existed.
  await (await cortexFor(env, tenantId)).purgeConversation(tenantId, conversationId);
  await purgeAttachmentsOf(env, tenantId, { conversationId });
  await deleteR2Prefix(env.BUCKET, promptSnapshotPrefix(tenantId, conversationId));
  const db = drizzle(env.DB);
  await env.DB.batch([
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
    d1Statement(
      env.DB,
      db.delete(conversations).where(and(eq(conversations.tenantId, tenantId), eq(conversations.id, conversationId))),
    ),
    // Its title is among the map's topics.
    forgetMemoryMap(env.DB, tenantId),
  ]);
  await deleteR2Prefix(env.BUCKET, conversationPrefix(tenantId, conversationId));
}
