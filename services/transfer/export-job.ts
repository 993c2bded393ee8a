// A tenant-wide export job's record: a D1 row (export_jobs) beside the one R2 object it produces.
// Every read and write names the tenant, so another tenant's id is simply not there. A job is kept
// for a retention period (EXPORT_RETENTION_DAYS), then the cron removes it with its object; a tenant
// has at most MAX_ACTIVE_EXPORTS queued or running at once, checked in the inserting statement.
//
// Removal (a delete or the retention) first marks the row `deleting`, which hides it, then removes
// the object, then the row: a crash in between leaves a row the next sweep finishes. The job's
// runner only records `done` over a row still `running`; finding it gone or `deleting`, it removes
// the object it just wrote, so a removal racing a running export leaves nothing behind.
import { and, asc, count, eq, gt, inArray, lte, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { z } from "zod";
import { envConfig, ENV_VARS } from "../../core/env-config";
import { exportJobs, tenants } from "../../db/schema";
import { exportJobPrefix } from "../../r2-layout";
import { deleteR2Prefix } from "../purge";

export const exportJobMessageSchema = z.strictObject({
  kind: z.literal("export"),
  tenantId: z.string().min(1).max(64),
  exportId: z.string().min(1).max(64),
});
export type ExportJobMessage = z.infer<typeof exportJobMessageSchema>;

/** One export of everything at a time is all a tenant needs; more would only export the same data twice. */
export const MAX_ACTIVE_EXPORTS = 1;
export const DEFAULT_EXPORT_RETENTION_DAYS = ENV_VARS.EXPORT_RETENTION_DAYS.default;
const DAY_MS = 24 * 60 * 60_000;

export type ExportStatus = "queued" | "running" | "done" | "failed";
const ACTIVE: ExportStatus[] = ["queued", "running"];
const VISIBLE: ExportStatus[] = ["queued", "running", "done", "failed"];

export interface ExportJob {
  id: string;
  status: ExportStatus;
  format: "jsonl";
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the job and its file are removed. */
  expiresAt: string;
  conversations: number;
  bytes: number;
  error: string | null;
}

/** EXPORT_RETENTION_DAYS (default DEFAULT_EXPORT_RETENTION_DAYS; fractions allowed) in milliseconds. */
export function exportRetentionMs(env: Pick<Env, "EXPORT_RETENTION_DAYS">): number {
  return envConfig(env).EXPORT_RETENTION_DAYS * DAY_MS;
}

const view = (row: typeof exportJobs.$inferSelect): ExportJob => ({
  id: row.id,
  status: row.status as ExportStatus,
  format: "jsonl",
  createdAt: row.createdAt,
  startedAt: row.startedAt,
  finishedAt: row.finishedAt,
  expiresAt: row.expiresAt,
  conversations: row.conversations,
  bytes: row.bytes,
  error: row.error,
});

const mine = (tenantId: string, id: string) => and(eq(exportJobs.tenantId, tenantId), eq(exportJobs.id, id));

/** A new queued job, or the id of the active job that stands in its way (null when it ended meanwhile). */
export async function createExportJob(
  db: D1Database,
  request: { tenantId: string; id: string; retentionMs: number; now?: Date },
): Promise<{ kind: "created"; job: ExportJob } | { kind: "blocked"; active: string | null }> {
  const { tenantId, id, retentionMs, now = new Date() } = request;
  const nowIso = now.toISOString();
  const job: ExportJob = {
    id,
    status: "queued",
    format: "jsonl",
    createdAt: nowIso,
    startedAt: null,
    finishedAt: null,
    expiresAt: new Date(now.getTime() + retentionMs).toISOString(),
    conversations: 0,
    bytes: 0,
    error: null,
  };
  const d = drizzle(db);
  const active = d
    .select({ n: count() })
    .from(exportJobs)
    .where(
      and(eq(exportJobs.tenantId, tenantId), inArray(exportJobs.status, ACTIVE), gt(exportJobs.expiresAt, nowIso)),
    );
  // INSERT ... SELECT from the tenant's own row, so the cap is checked in the inserting statement.
  const inserted = await d.insert(exportJobs).select((qb) =>
    qb
      .select({
        id: sql<string>`${job.id}`.as("id"),
        tenantId: tenants.id,
        status: sql<string>`${job.status}`.as("status"),
        format: sql<string>`${job.format}`.as("format"),
        createdAt: sql<string>`${job.createdAt}`.as("created_at"),
        startedAt: sql<null>`NULL`.as("started_at"),
        finishedAt: sql<null>`NULL`.as("finished_at"),
        expiresAt: sql<string>`${job.expiresAt}`.as("expires_at"),
        conversations: sql<number>`0`.as("conversations"),
        bytes: sql<number>`0`.as("bytes"),
        error: sql<null>`NULL`.as("error"),
      })
      .from(tenants)
      .where(and(eq(tenants.id, tenantId), sql`(${active}) < ${MAX_ACTIVE_EXPORTS}`)),
  );
  if (inserted.meta.changes) return { kind: "created", job };
  const blocking = await d
    .select({ id: exportJobs.id })
    .from(exportJobs)
    .where(and(eq(exportJobs.tenantId, tenantId), inArray(exportJobs.status, ACTIVE), gt(exportJobs.expiresAt, nowIso)))
    .orderBy(asc(exportJobs.id))
    .get();
  return { kind: "blocked", active: blocking?.id ?? null };
}

/** The tenant's job, unless it is being removed or its time is up. */
export async function getExportJob(
  db: D1Database,
  { tenantId, id, now = new Date() }: { tenantId: string; id: string; now?: Date },
): Promise<ExportJob | null> {
  const row = await drizzle(db)
    .select()
    .from(exportJobs)
    .where(and(mine(tenantId, id), inArray(exportJobs.status, VISIBLE), gt(exportJobs.expiresAt, now.toISOString())))
    .get();
  return row ? view(row) : null;
}

/**
 * Marks a queued (or retried) job running; null when there is nothing to run (finished, removed,
 * or its retention ran out while it waited: it is a 404 from then on, and the cron removes it).
 */
export async function startExportJob(
  db: D1Database,
  { tenantId, id, now = new Date() }: { tenantId: string; id: string; now?: Date },
): Promise<ExportJob | null> {
  const rows = await drizzle(db)
    .update(exportJobs)
    .set({ status: "running", startedAt: now.toISOString() })
    .where(and(mine(tenantId, id), inArray(exportJobs.status, ACTIVE), gt(exportJobs.expiresAt, now.toISOString())))
    .returning();
  return rows[0] ? view(rows[0]) : null;
}

/** Records a finished export, kept for the retention from now; false when the job was removed or expired meanwhile. */
export async function finishExportJob(
  db: D1Database,
  {
    tenantId,
    id,
    result,
    retentionMs,
    now = new Date(),
  }: {
    tenantId: string;
    id: string;
    result: { conversations: number; bytes: number };
    retentionMs: number;
    now?: Date;
  },
): Promise<boolean> {
  const rows = await drizzle(db)
    .update(exportJobs)
    .set({
      status: "done",
      finishedAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + retentionMs).toISOString(),
      ...result,
    })
    .where(and(mine(tenantId, id), eq(exportJobs.status, "running"), gt(exportJobs.expiresAt, now.toISOString())))
    .returning({ id: exportJobs.id });
  return rows.length > 0;
}

/** Marks a job the queue gave up on as failed (a finished or removed one stays as it is). */
export async function failExportJob(
  db: D1Database,
  { tenantId, id, error, now = new Date() }: { tenantId: string; id: string; error: string; now?: Date },
): Promise<void> {
  await drizzle(db)
    .update(exportJobs)
    .set({ status: "failed", finishedAt: now.toISOString(), error })
    .where(and(mine(tenantId, id), inArray(exportJobs.status, ACTIVE)));
}

/** Hides the job, removes its object, then its row; false when the tenant has no such job. */
export async function removeExportJob(
  db: D1Database,
  bucket: R2Bucket,
  { tenantId, id, now = new Date() }: { tenantId: string; id: string; now?: Date },
): Promise<boolean> {
  // Due at once: should this request end before the row is gone, the next sweep finishes it.
  const marked = await drizzle(db)
    .update(exportJobs)
    .set({ status: "deleting", expiresAt: now.toISOString() })
    .where(and(mine(tenantId, id), inArray(exportJobs.status, VISIBLE), gt(exportJobs.expiresAt, now.toISOString())))
    .returning({ id: exportJobs.id });
  if (!marked.length) return false;
  await purgeExport(db, bucket, { tenantId, id });
  return true;
}

async function purgeExport(
  db: D1Database,
  bucket: R2Bucket,
  { tenantId, id }: { tenantId: string; id: string },
): Promise<void> {
  await deleteR2Prefix(bucket, exportJobPrefix(tenantId, id));
  await drizzle(db).delete(exportJobs).where(mine(tenantId, id));
}

/** The cron's sweep: up to `limit` jobs whose time is up (a cut-short removal among them), with their objects. */
export async function sweepExpiredExports(
  db: D1Database,
  bucket: R2Bucket,
  { now, limit = 100 }: { now: number; limit?: number },
): Promise<number> {
  const d = drizzle(db);
  const due = await d
    .select({ id: exportJobs.id, tenantId: exportJobs.tenantId })
    .from(exportJobs)
    .where(lte(exportJobs.expiresAt, new Date(now).toISOString()))
    .orderBy(asc(exportJobs.expiresAt))
    .limit(limit);
  for (const j of due) {
    await d.update(exportJobs).set({ status: "deleting" }).where(mine(j.tenantId, j.id));
    await purgeExport(db, bucket, { tenantId: j.tenantId, id: j.id });
  }
  return due.length;
}
