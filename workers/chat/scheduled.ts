// The cron trigger: every tick closes abandoned automation runs, sends again claimed runs never
// started (their message may have been lost), and claims a page of due
// automation slots (fanned out through the automation queue, which also carries the claim of any
// further pages), sweeps expired websocket tickets, abandoned uploads, attachment deletes cut short
// and never repeated (services/attachments/delete.ts), imports' staging a dead
// request left behind, tenant-wide exports past their retention and conversation create keys past
// their 24 hours, and rolls closed days of the
// corpus log into their single log objects.
import { attachmentPrefix } from "../../r2-layout";
import { abortUpload, finishCutShortDeletes } from "../../services/attachments/delete";
import { claimOpenUpload, deleteClaimedUpload, staleUploads, type UploadRef } from "../../services/attachments/store";
import { claimDueRuns, closeAbandonedRuns, resendUnsentRuns } from "../../services/automations";
import { rollUpCorpusDays } from "../../services/corpus";
import { sweepExpiredCreateKeys } from "../../services/conversation-list";
import { deleteR2Prefix } from "../../services/purge";
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
  deletesFinished: number;
  importsSwept: number;
  exportsSwept: number;
  corpusDaysRolled: number;
  createKeysSwept: number;
}> {
  const now = controller.scheduledTime;
  const work = [
    sweepExpiredTickets(env.DB, now),
    closeAbandonedRuns(env.DB, now),
    // Every unsent run once (up to RESEND_TICK_RUNS), however many a lost send left.
    resendUnsentRuns(env, now).then((r) => r.resent),
    claimDueRuns(env, now),
    sweepAbandonedUploads(env, now),
    finishCutShortDeletes(env, { now, limit: 200 }),
    sweepStagedImports(env.BUCKET, { now, limit: 200 }),
    sweepExpiredExports(env.DB, env.BUCKET, { now }),
    rollUpCorpusDays(env, now),
    sweepExpiredCreateKeys(env.DB, now),
  ] as const;
  // Every sweep runs to its end before the tick ends: with the first failure ending the tick's
  // promise, the others would go on unawaited, and the platform may cut them off mid-write. The
  // first failure then fails the tick (the platform logs it); any further ones are logged here.
  const failures = (await Promise.allSettled(work)).flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  for (const err of failures.slice(1)) console.error("cron tick: a further sweep failed too", err);
  if (failures.length > 0) throw failures[0];
  // All fulfilled: this only reads their values.
  const [
    ticketsSwept,
    closed,
    resent,
    runs,
    uploadsSwept,
    deletesFinished,
    importsSwept,
    exportsSwept,
    corpusDaysRolled,
    createKeysSwept,
  ] = await Promise.all(work);
  return {
    ticketsSwept,
    closed,
    resent,
    ...runs,
    uploadsSwept,
    deletesFinished,
    importsSwept,
    exportsSwept,
    corpusDaysRolled,
    createKeysSwept,
  };
}

const SINGLE_UPLOAD_MS = 60 * 60_000;
const MULTIPART_UPLOAD_MS = 7 * 24 * 60 * 60_000;

/**
 * Uploads that never finished (a client that vanished mid-body, a multipart upload never
 * completed): their rows and any bytes are removed, so nothing stays half-written. Each is claimed
 * first, and only while still open: an upload a finish or a complete made ready since the listing
 * keeps its row and its bytes, and once claimed no finish can make it ready (its caller purges
 * what it wrote). Then its multipart upload is aborted and its bytes removed, and its row goes
 * last: while any byte may be left, a row names it, and a tick that failed midway is taken up
 * again by the next (the listing returns claimed rows). One upload's failure is logged and does
 * not stop the others. Answers how many were removed.
 */
export async function sweepAbandonedUploads(env: Env, now: number): Promise<number> {
  const results = await staleUploads(env.DB, {
    singleBefore: new Date(now - SINGLE_UPLOAD_MS).toISOString(),
    multipartBefore: new Date(now - MULTIPART_UPLOAD_MS).toISOString(),
    limit: 200,
  });
  let removed = 0;
  for (const u of results) {
    try {
      if (await removeAbandonedUpload(env, u)) removed++;
    } catch (err) {
      console.error("abandoned upload not swept; the next tick retries", u.id, err);
    }
  }
  return removed;
}

async function removeAbandonedUpload(env: Env, u: UploadRef): Promise<boolean> {
  if (!(await claimOpenUpload(env.DB, u.id))) return false;
  // One already aborted (by a tick that failed later, or by R2's own expiry) counts as aborted; an
  // abort that fails leaves the claimed row for the next tick.
  if (u.uploadId) await abortUpload(env.BUCKET, { r2Key: u.r2Key, uploadId: u.uploadId });
  await deleteR2Prefix(env.BUCKET, attachmentPrefix(u.tenantId, u.id));
  await deleteClaimedUpload(env.DB, u.id);
  return true;
}
