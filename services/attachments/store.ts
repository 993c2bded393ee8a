// The attachments table (drizzle): metadata and facts; the bytes are in R2.
import { and, count, eq, gt, isNotNull, isNull, lt, lte, ne, or } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { alias } from "drizzle-orm/sqlite-core";
import { attachments } from "../../db/schema";
import type { AttachmentFacts } from "./note";

export type AttachmentRow = typeof attachments.$inferSelect;

export interface Attachment {
  id: string;
  conversationId: string;
  name: string;
  type: string;
  size: number;
  status: string;
  facts: AttachmentFacts;
  createdAt: string;
}

export const toAttachment = (r: AttachmentRow): Attachment => ({
  id: r.id,
  conversationId: r.conversationId,
  name: r.name,
  type: r.type,
  size: r.size,
  status: r.status,
  facts: JSON.parse(r.facts) as AttachmentFacts,
  createdAt: r.createdAt,
});

export async function insertAttachment(db: D1Database, row: AttachmentRow): Promise<void> {
  await drizzle(db).insert(attachments).values(row);
}

/**
 * The claim the abandoned-upload sweep stamps on an upload it removes (its updatedAt, its status
 * left `uploading`, so every reader of an open upload treats it as before): older than any cutoff,
 * the sweep lists it again until its bytes and row are gone, and no finish can make it ready.
 */
export const SWEEP_CLAIM = new Date(0).toISOString();

/**
 * The most ready files one project may have: its conversations' prompt lists up to
 * PROMPT_PROJECT_FILES (services/projects.ts) of them, so every file of a project within the cap is
 * listed there. Here because the statement that makes a file ready holds it (finishAttachment).
 */
export const MAX_PROJECT_FILES = 200;

/** The row `id` of the tenant while it is an upload still open and not claimed by the sweep. */
const openUploadIs = (tenantId: string, id: string) =>
  and(
    eq(attachments.tenantId, tenantId),
    eq(attachments.id, id),
    eq(attachments.status, "uploading"),
    ne(attachments.updatedAt, SWEEP_CLAIM),
  );

const peers = alias(attachments, "peers");

/**
 * The row's project has room for one more ready file (a conversation's file has no project): its
 * ready files counted in the statement that tests this.
 */
const roomInItsProject = (db: D1Database) =>
  or(
    isNull(attachments.projectId),
    lt(
      drizzle(db)
        .select({ n: count() })
        .from(peers)
        .where(
          and(
            eq(peers.tenantId, attachments.tenantId),
            eq(peers.projectId, attachments.projectId),
            eq(peers.status, "ready"),
          ),
        ),
      MAX_PROJECT_FILES,
    ),
  );

/**
 * Finishes an upload: only one still open and not claimed by the abandoned-upload sweep, and a
 * project's file only while its project has fewer than MAX_PROJECT_FILES ready files, all in one
 * statement. D1 runs statements one at a time, so of files finishing at once exactly as many as
 * fit are made ready: were each counted after it was ready, every file racing for the last places
 * would count the others and all could be refused. "updated", or why not: "full" (the row still
 * open, its project without room) or "missing" (the row deleted or claimed meanwhile). Either
 * way the caller purges its bytes.
 */
export async function finishAttachment(
  db: D1Database,
  {
    tenantId,
    id,
    change,
  }: {
    tenantId: string;
    id: string;
    change: Partial<Pick<AttachmentRow, "status" | "size" | "type" | "facts" | "uploadId">>;
  },
): Promise<"updated" | "full" | "missing"> {
  const d = drizzle(db);
  const updated = await d
    .update(attachments)
    .set({ ...change, updatedAt: new Date().toISOString() })
    .where(and(openUploadIs(tenantId, id), roomInItsProject(db)))
    .returning({ id: attachments.id });
  if (updated.length) return "updated";
  // Refused with its row still open: only its project's room can have refused it.
  const open = await d
    .select({ id: attachments.id })
    .from(attachments)
    .where(and(openUploadIs(tenantId, id), isNotNull(attachments.projectId)))
    .get();
  return open ? "full" : "missing";
}

/** Tenant-scoped: another tenant's id is simply not found. */
export async function getAttachmentRow(db: D1Database, tenantId: string, id: string): Promise<AttachmentRow | null> {
  return (
    (await drizzle(db)
      .select()
      .from(attachments)
      .where(and(eq(attachments.tenantId, tenantId), eq(attachments.id, id)))
      .get()) ?? null
  );
}

/**
 * The conversation's finished uploads, oldest first, after the id `after` when given, and only those
 * whose upload began at or before `createdThrough` when given (an ISO time, which sorts as a string).
 */
export async function listAttachmentRows(
  db: D1Database,
  {
    tenantId,
    conversationId,
    limit,
    after,
    createdThrough,
  }: { tenantId: string; conversationId: string; limit: number; after?: string; createdThrough?: string },
): Promise<AttachmentRow[]> {
  const where = and(
    eq(attachments.tenantId, tenantId),
    eq(attachments.conversationId, conversationId),
    eq(attachments.status, "ready"),
    after ? gt(attachments.id, after) : undefined,
    createdThrough ? lte(attachments.createdAt, createdThrough) : undefined,
  );
  return drizzle(db).select().from(attachments).where(where).orderBy(attachments.id).limit(limit);
}

/**
 * First search of a PDF started: its pages are being extracted (updatedAt stays the upload's, until
 * pages land: markIndexProgress).
 */
export async function markIndexing(db: D1Database, tenantId: string, id: string): Promise<void> {
  await drizzle(db)
    .update(attachments)
    .set({ indexStatus: "indexing", indexStartedAt: new Date().toISOString() })
    .where(and(eq(attachments.tenantId, tenantId), eq(attachments.id, id)));
}

/**
 * Pages of a run still indexing landed: its updatedAt is the run's last progress, so pdf_search
 * starts again only a run that has made none for a while (agent/tools/pdf-search.ts STALL_MS).
 */
export async function markIndexProgress(db: D1Database, tenantId: string, id: string): Promise<void> {
  await drizzle(db)
    .update(attachments)
    .set({ updatedAt: new Date().toISOString() })
    .where(and(eq(attachments.tenantId, tenantId), eq(attachments.id, id), eq(attachments.indexStatus, "indexing")));
}

/**
 * The last sign of life of a row's indexing run: its start, or the last pages that landed
 * (markIndexProgress), whichever is later (ISO times sort as strings).
 */
export const indexProgressAt = (row: Pick<AttachmentRow, "indexStartedAt" | "updatedAt">): string | null =>
  row.indexStartedAt === null ? null : [row.indexStartedAt, row.updatedAt].sort()[1];

export async function markIndexed(db: D1Database, tenantId: string, id: string): Promise<void> {
  await drizzle(db)
    .update(attachments)
    .set({ indexStatus: "indexed", updatedAt: new Date().toISOString() })
    .where(and(eq(attachments.tenantId, tenantId), eq(attachments.id, id)));
}

export type UploadRef = Pick<AttachmentRow, "id" | "tenantId" | "r2Key" | "uploadId">;

/**
 * Uploads still open (of every tenant, for the cron sweep): single-request ones last touched
 * before `singleBefore`, multipart ones before `multipartBefore`, and those the sweep claimed
 * (SWEEP_CLAIM, older than either) but failed to remove, so a later tick completes them.
 */
export async function staleUploads(
  db: D1Database,
  { singleBefore, multipartBefore, limit }: { singleBefore: string; multipartBefore: string; limit: number },
): Promise<UploadRef[]> {
  return drizzle(db)
    .select({
      id: attachments.id,
      tenantId: attachments.tenantId,
      r2Key: attachments.r2Key,
      uploadId: attachments.uploadId,
    })
    .from(attachments)
    .where(
      and(
        eq(attachments.status, "uploading"),
        or(
          eq(attachments.updatedAt, SWEEP_CLAIM),
          and(isNull(attachments.uploadId), lt(attachments.updatedAt, singleBefore)),
          lt(attachments.updatedAt, multipartBefore),
        ),
      ),
    )
    .limit(limit);
}

/**
 * Claims an upload for the sweep only while it is still open (one a finish or a complete made
 * ready meanwhile stays): from then on no finish can make it ready. Whether it did (again for a
 * row a failed tick claimed).
 */
export async function claimOpenUpload(db: D1Database, id: string): Promise<boolean> {
  const claimed = await drizzle(db)
    .update(attachments)
    .set({ updatedAt: SWEEP_CLAIM })
    .where(and(eq(attachments.id, id), eq(attachments.status, "uploading")))
    .returning({ id: attachments.id });
  return claimed.length > 0;
}

/** Removes the row of an upload the sweep claimed, once its bytes are gone. */
export async function deleteClaimedUpload(db: D1Database, id: string): Promise<void> {
  await drizzle(db)
    .delete(attachments)
    .where(and(eq(attachments.id, id), eq(attachments.status, "uploading"), eq(attachments.updatedAt, SWEEP_CLAIM)));
}
