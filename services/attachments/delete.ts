// Deleting an attachment (of a conversation or a project): its bytes and line index in R2, its
// extracted pages in the cortex shard, and its row. The row first turns into its tombstone: the same
// row under the id `retiredId` gives it and status `deleting`, so from then on nothing reads it (a
// tool, a download, a listing, a turn's note) and a writer racing the delete finds it gone: a
// page-extraction job (services/attachments/page-index.ts) or a text file's first read writing its
// line index and UTF-8 copy (services/attachments/text-view.ts) looks for the row after writing and
// removes what it wrote when the row is gone. What a writer wrote while it still saw the row is
// swept next, with the bytes, the index, the copy and the pages; the tombstone goes last. A delete
// cut short anywhere (a 5xx, a crash) leaves the row or its tombstone, and running it again
// (`attachmentToDelete` finds either) completes it: every step is safe to repeat.
import { and, eq, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { attachments } from "../../db/schema";
import { attachmentPrefix } from "../../r2-layout";
import { cortexFor } from "../cortex/routing";
import type { CortexMark } from "../cortex/shard";
import { deleteR2Prefix } from "../purge";
import { type AttachmentRow, getAttachmentRow } from "./store";

const RETIRED = "~deleting";

/** The id of an attachment's tombstone: a row no read by the attachment's id finds. */
const retiredId = (id: string): string => `${id}${RETIRED}`;

/** The attachment's own id, from it or its tombstone's. */
const ownId = (id: string): string => (id.endsWith(RETIRED) ? id.slice(0, -RETIRED.length) : id);

/** The attachment's row, or its tombstone when a delete of it was cut short (the repeat completes it). */
export async function attachmentToDelete(db: D1Database, tenantId: string, id: string): Promise<AttachmentRow | null> {
  return (await getAttachmentRow(db, tenantId, id)) ?? (await getAttachmentRow(db, tenantId, retiredId(id)));
}

/** The code R2 puts at the end of its error's message (`… (10024)`), if any. */
export const r2Code = (err: unknown) => /\((\d{5})\)\s*$/.exec(err instanceof Error ? err.message : String(err))?.[1];

/** R2's "the specified multipart upload does not exist". */
export const NO_SUCH_UPLOAD = "10024";

/**
 * Aborts an R2 multipart upload. One R2 no longer has (aborted already, by an earlier try whose
 * answer was lost or by R2's own expiry, or completed) counts as aborted; any other failure is
 * thrown, so the row that names the upload stays and a repeat, or the abandoned-upload sweep,
 * aborts it again: an upload left open with no row naming it would be aborted by nothing.
 */
export async function abortUpload(bucket: R2Bucket, { r2Key, uploadId }: { r2Key: string; uploadId: string }) {
  try {
    await bucket.resumeMultipartUpload(r2Key, uploadId).abort();
  } catch (err) {
    if (r2Code(err) !== NO_SUCH_UPLOAD) throw err;
  }
}

/**
 * Answers where its pages' removal left the tenant's cortex shard (the sweep's bookmark, with the
 * shard): the attachment's DELETE answers it in `x-cortex-bookmark`. `row` may be the tombstone.
 */
export async function purgeAttachment(
  env: Env,
  row: Pick<AttachmentRow, "id" | "tenantId" | "r2Key" | "uploadId" | "status">,
): Promise<CortexMark | null> {
  const id = ownId(row.id);
  // Before the row turns into its tombstone (whose status no longer says so), so a repeat aborts
  // too; an abort that fails stops the delete here, the row as it was.
  if (row.status === "uploading" && row.uploadId)
    await abortUpload(env.BUCKET, { r2Key: row.r2Key, uploadId: row.uploadId });
  const db = drizzle(env.DB);
  const mine = (rowId: string) => and(eq(attachments.tenantId, row.tenantId), eq(attachments.id, rowId));
  await db
    .update(attachments)
    .set({ id: retiredId(id), status: "deleting", updatedAt: new Date().toISOString() })
    .where(mine(id));
  // The prefix holds the bytes, the line index and the UTF-8 copy (text-view.ts derivedTextKeys).
  await deleteR2Prefix(env.BUCKET, attachmentPrefix(row.tenantId, id));
  const cortex = await cortexFor(env, row.tenantId);
  await cortex.purgeAttachment(row.tenantId, id);
  await db.delete(attachments).where(mine(retiredId(id)));
  return cortex.written;
}

/** A delete takes seconds: a tombstone older than this was left by one cut short and never repeated. */
export const CUT_SHORT_DELETE_MS = 60 * 60_000;

/**
 * Completes the deletes cut short (a 5xx, a crash) that nobody repeated: every tombstone older than
 * CUT_SHORT_DELETE_MS at `now`, up to `limit`, purged again (the cron trigger's). One failure is
 * logged and left for the next tick. Answers how many were completed.
 */
export async function finishCutShortDeletes(env: Env, { now, limit }: { now: number; limit: number }): Promise<number> {
  const rows = await drizzle(env.DB)
    .select()
    .from(attachments)
    .where(
      and(
        eq(attachments.status, "deleting"),
        lt(attachments.updatedAt, new Date(now - CUT_SHORT_DELETE_MS).toISOString()),
      ),
    )
    .limit(limit);
  let finished = 0;
  for (const row of rows) {
    try {
      await purgeAttachment(env, row);
      finished++;
    } catch (err) {
      console.error("a delete cut short not completed; the next tick retries", row.id, err);
    }
  }
  return finished;
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
