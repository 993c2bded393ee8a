// Deleting an attachment (of a conversation or a project): its bytes and line index in R2, its
// extracted pages in the cortex shard, and its row. The row goes after the pages, so a delete cut
// short by a crash leaves the row behind and running it again completes it; the pages are swept
// once more after the row, because a page-extraction job racing the delete may have written
// between the first sweep and the row's removal while still seeing the row (a job that writes
// later finds the row gone and removes what it wrote: services/attachments/page-index.ts). A text
// file's line index and UTF-8 copy, written on first read, are swept after the row the same way
// (services/attachments/text-view.ts).
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { attachments } from "../../db/schema";
import { attachmentPrefix } from "../../r2-layout";
import { cortexFor } from "../cortex/routing";
import type { CortexMark } from "../cortex/shard";
import { deleteR2Prefix } from "../purge";
import { derivedTextKeys } from "./text-view";
import type { AttachmentRow } from "./store";

/**
 * Answers where its pages' removal left the tenant's cortex shard (the later sweep's bookmark, with
 * the shard): the attachment's DELETE answers it in `x-cortex-bookmark`.
 */
export async function purgeAttachment(
  env: Env,
  row: Pick<AttachmentRow, "id" | "tenantId" | "r2Key" | "uploadId" | "status">,
): Promise<CortexMark | null> {
  if (row.status === "uploading" && row.uploadId)
    await env.BUCKET.resumeMultipartUpload(row.r2Key, row.uploadId)
      .abort()
      .catch(() => {});
  await deleteR2Prefix(env.BUCKET, attachmentPrefix(row.tenantId, row.id));
  const cortex = await cortexFor(env, row.tenantId);
  await cortex.purgeAttachment(row.tenantId, row.id);
  await drizzle(env.DB)
    .delete(attachments)
    .where(and(eq(attachments.tenantId, row.tenantId), eq(attachments.id, row.id)));
  await cortex.purgeAttachment(row.tenantId, row.id);
  await env.BUCKET.delete(derivedTextKeys(row.tenantId, row.id));
  return cortex.written;
}

/** Every attachment of the tenant's conversation or project, purged a page at a time. */
export async function purgeAttachmentsOf(
  env: Env,
  tenantId: string,
  owner: { conversationId: string } | { projectId: string },
): Promise<number> {
  const where = and(
    eq(attachments.tenantId, tenantId),
    "conversationId" in owner
      ? eq(attachments.conversationId, owner.conversationId)
      : eq(attachments.projectId, owner.projectId),
  );
  let removed = 0;
  for (;;) {
    const results = await drizzle(env.DB)
      .select({
        id: attachments.id,
        tenantId: attachments.tenantId,
        r2Key: attachments.r2Key,
        uploadId: attachments.uploadId,
        status: attachments.status,
      })
      .from(attachments)
      .where(where)
      .orderBy(attachments.id)
      .limit(50);
    if (!results.length) return removed;
    for (const row of results) await purgeAttachment(env, row);
    removed += results.length;
  }
}
