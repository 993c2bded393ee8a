// Everything a conversation owns outside its Durable Object, removed: its attachments (bytes,
// pages, rows), its prompt snapshots, its cortex rows (messages, attachment pages, episodes), its
// episodes, websocket tickets and listing row, and last its record in R2 (head and batches).
// Every step is idempotent, so the DO's tombstone can run it again after a crash.
import { conversationPrefix, promptSnapshotPrefix } from "../r2-layout";
import { purgeAttachmentsWhere } from "./attachments/delete";
import { deleteR2Prefix, deleteRowsInChunks } from "./purge";

export async function purgeConversation(env: Env, tenantId: string, conversationId: string): Promise<void> {
  await purgeAttachmentsWhere(env, "tenant_id = ? AND conversation_id = ?", [tenantId, conversationId]);
  await deleteR2Prefix(env.BUCKET, promptSnapshotPrefix(tenantId, conversationId));
  await deleteRowsInChunks(env.DB, "cortex_docs", "tenant_id = ? AND conversation_id = ?", [tenantId, conversationId]);
  await env.DB.batch([
    env.DB.prepare(`DELETE FROM memory_episodes WHERE tenant_id = ? AND conversation_id = ?`).bind(tenantId, conversationId),
    env.DB.prepare(`DELETE FROM ws_tickets WHERE tenant_id = ? AND conversation_id = ?`).bind(tenantId, conversationId),
    env.DB.prepare(`DELETE FROM conversations WHERE tenant_id = ? AND id = ?`).bind(tenantId, conversationId),
  ]);
  await deleteR2Prefix(env.BUCKET, conversationPrefix(tenantId, conversationId));
}
