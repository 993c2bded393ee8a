// The export queue's consumer: one job writes every conversation of its tenant, as JSONL (each
// conversation's export lines, its `conversation` line first), into one R2 object. A failed
// attempt is retried by the queue from the start (the object is rewritten whole); the dead-letter
// queue's consumer marks a job the queue gave up on as failed. The job's row is in D1
// (services/transfer/export-job.ts).
import { exportDataKey } from "../../r2-layout";
import { listConversationRows } from "../../services/conversation-list";
import {
  exportJobMessageSchema,
  exportRetentionMs,
  failExportJob,
  finishExportJob,
  getExportJob,
  startExportJob,
  type ExportJobMessage,
} from "../../services/transfer/export-job";
import { EXPORT_MEDIA_TYPES, exportText } from "../../services/transfer/export-format";
import { R2StreamWriter } from "../../services/transfer/r2-stream-writer";
import { exportSourceFor } from "./export-source";

export const EXPORT_QUEUE = "context-chat-exports";
export const EXPORT_DLQ = "context-chat-exports-dlq";

const jobOf = (message: Message<unknown>): ExportJobMessage | null => {
  const parsed = exportJobMessageSchema.safeParse(message.body);
  return parsed.success ? parsed.data : null;
};

export async function runExportBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const job = jobOf(message);
    if (!job) {
      console.error("dropping malformed export job", message.id);
      message.ack();
      continue;
    }
    try {
      await runExportJob(env, job);
      message.ack();
    } catch (err) {
      console.error("export attempt failed; the queue retries it", job.exportId, message.attempts, err);
      message.retry({ delaySeconds: 0 });
    }
  }
}

export async function recordDeadExports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const job = jobOf(message);
    if (job)
      await failExportJob(env.DB, {
        tenantId: job.tenantId,
        id: job.exportId,
        error: "the export failed after retries; start a new one",
      });
    message.ack();
  }
}

export async function runExportJob(env: Env, { tenantId, exportId }: ExportJobMessage): Promise<void> {
  // Finished, failed or removed since it was queued: nothing to run.
  if (!(await startExportJob(env.DB, { tenantId, id: exportId }))) return;
  const key = exportDataKey(tenantId, exportId);
  const writer = new R2StreamWriter(env.BUCKET, key, EXPORT_MEDIA_TYPES.jsonl);
  let conversations = 0;
  try {
    for (let before: string | undefined; ; ) {
      const rows = await listConversationRows(env.DB, { tenantId, limit: 100, before });
      for (const row of rows) {
        const source = await exportSourceFor(env, { tenantId, conversationId: row.id });
        // Deleted since it was listed: nothing to write.
        if (!source) continue;
        for await (const piece of exportText(source, "jsonl")) await writer.write(piece);
        conversations++;
      }
      if (rows.length < 100) break;
      before = rows[rows.length - 1].id;
    }
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
  const recorded = await finishExportJob(env.DB, {
    tenantId,
    id: exportId,
    result: { conversations, bytes: writer.bytes },
    retentionMs: exportRetentionMs(env),
  });
  // Deleted (or expired) while it ran: the object just written belongs to nobody. A job another
  // delivery of the same message finished meanwhile (queues deliver at least once) keeps its file.
  if (!recorded && !(await getExportJob(env.DB, { tenantId, id: exportId }))) await env.BUCKET.delete(key);
}
