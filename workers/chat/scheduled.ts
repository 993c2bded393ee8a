// The cron trigger: every tick closes abandoned automation runs, sends again claimed runs never
// started (their message may have been lost), and claims a page of due
// automation slots (fanned out through the automation queue, which also carries the claim of any
// further pages), sweeps expired websocket tickets, abandoned uploads, imports' staging a dead
// request left behind, tenant-wide exports past their retention and conversation create keys past
// their 24 hours, and rolls closed days of the
// corpus log into their single log objects.
import { attachmentPrefix } from "../../r2-layout";
import { deleteOpenUpload, staleUploads } from "../../services/attachments/store";
import { claimDueRuns, closeAbandonedRuns, sendRuns, unsentRuns } from "../../services/automations";
import { rollUpCorpusDays } from "../../services/corpus";
import { sweepExpiredCreateKeys } from "../../services/conversation-list";
import { sweepExpiredExports } from "../../services/transfer/export-job";
import { sweepStagedImports } from "../../services/transfer/import-staging";
import { sweepExpiredTickets } from "./ws-tickets";

export async function runScheduled(
  controller: ScheduledController,
  env: Env,
): Promise<{
  ticketsSwept: number;
  claimed: number;
  continued: boolean;
  closed: number;
  resent: number;
  uploadsSwept: number;
  importsSwept: number;
  exportsSwept: number;
  corpusDaysRolled: number;
  createKeysSwept: number;
}> {
  const now = controller.scheduledTime;
  const [
    ticketsSwept,
    closed,
    resent,
    runs,
    uploadsSwept,
    importsSwept,
    exportsSwept,
    corpusDaysRolled,
    createKeysSwept,
  ] = await Promise.all([
    sweepExpiredTickets(env.DB, now),
    closeAbandonedRuns(env.DB, now),
    resendUnsentRuns(env, now),
    claimDueRuns(env, now),
    sweepAbandonedUploads(env, now),
    sweepStagedImports(env.BUCKET, { now, limit: 200 }),
    sweepExpiredExports(env.DB, env.BUCKET, { now }),
    rollUpCorpusDays(env, now),
    sweepExpiredCreateKeys(env.DB, now),
  ]);
  return {
    ticketsSwept,
    closed,
    resent,
    ...runs,
    uploadsSwept,
    importsSwept,
    exportsSwept,
    corpusDaysRolled,
    createKeysSwept,
  };
}

/** Claimed runs whose queue message may have been lost are sent again (services/automations.ts). */
async function resendUnsentRuns(env: Env, now: number): Promise<number> {
  const jobs = await unsentRuns(env.DB, now);
  await sendRuns(env, jobs);
  return jobs.length;
}

const SINGLE_UPLOAD_MS = 60 * 60_000;
const MULTIPART_UPLOAD_MS = 7 * 24 * 60 * 60_000;

/**
 * Uploads that never finished (a client that vanished mid-body, a multipart upload never
 * completed): their rows and any bytes are removed, so nothing stays half-written. The row goes
 * first, and only while still open: an upload a finish or a complete made ready since the listing
 * keeps its row and its bytes (removing the bytes first would leave it ready with none). Its bytes
 * go only once its row did; a finish that comes after finds no row, and its caller purges them.
 */
export async function sweepAbandonedUploads(env: Env, now: number): Promise<number> {
  const results = await staleUploads(env.DB, {
    singleBefore: new Date(now - SINGLE_UPLOAD_MS).toISOString(),
    multipartBefore: new Date(now - MULTIPART_UPLOAD_MS).toISOString(),
    limit: 200,
  });
  for (const u of results) {
    if (!(await deleteOpenUpload(env.DB, u.id))) continue;
    if (u.uploadId)
      await env.BUCKET.resumeMultipartUpload(u.r2Key, u.uploadId)
        .abort()
        .catch(() => {});
    const listed = await env.BUCKET.list({ prefix: attachmentPrefix(u.tenantId, u.id) });
    if (listed.objects.length) await env.BUCKET.delete(listed.objects.map((o) => o.key));
  }
  return results.length;
}
