// A tenant-wide export job's record: its status object in R2 beside the export it produces (no
// table: the job is found by tenant and id, so another tenant's id is simply not there).
import { z } from "zod";
import { exportStatusKey } from "../../r2-layout";
import { withRetry } from "../record/retry";

export const exportJobMessageSchema = z.strictObject({ kind: z.literal("export"), tenantId: z.string().min(1).max(64), exportId: z.string().min(1).max(64) });
export type ExportJobMessage = z.infer<typeof exportJobMessageSchema>;

export interface ExportJob {
  id: string;
  status: "queued" | "running" | "done" | "failed";
  format: "jsonl";
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  conversations: number;
  bytes: number;
  error: string | null;
}

export async function readExportJob(bucket: R2Bucket, tenantId: string, exportId: string): Promise<ExportJob | null> {
  return withRetry("export job read", async () => {
    const obj = await bucket.get(exportStatusKey(tenantId, exportId));
    return obj ? ((await obj.json()) as ExportJob) : null;
  });
}

export async function writeExportJob(bucket: R2Bucket, tenantId: string, job: ExportJob): Promise<void> {
  await withRetry("export job write", () => bucket.put(exportStatusKey(tenantId, job.id), JSON.stringify(job), { httpMetadata: { contentType: "application/json" } }));
}
