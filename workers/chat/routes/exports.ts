// /v1/exports: a tenant-wide export of every conversation, run as a queued job (export-runner.ts)
// rather than inside a request, and downloaded as one JSONL object once done.
import { Hono } from "hono";
import { z } from "zod";
import { isId, sortableId } from "../../../core/ids";
import { exportDataKey } from "../../../r2-layout";
import { readExportJob, writeExportJob, type ExportJob } from "../../../services/transfer/export-job";
import { EXPORT_MEDIA_TYPES } from "../../../services/transfer/export-format";
import { notFound } from "../errors";
import { doc } from "../openapi/registry";
import { resource } from "../openapi/schemas";
import type { AppEnv } from "../types";

const exportSchema = resource("Export", "A tenant-wide export job: status, counts, and its download link once done.");

export const exportRoutes = new Hono<AppEnv>();

const view = (job: ExportJob) => ({ ...job, download: job.status === "done" ? `/v1/exports/${job.id}/download` : null });

async function jobFor(c: { env: Env; get(k: "tenantId"): string; req: { param(k: "id"): string } }): Promise<ExportJob> {
  const id = c.req.param("id");
  const job = isId("exp", id) ? await readExportJob(c.env.BUCKET, c.get("tenantId"), id) : null;
  if (!job) throw notFound("export");
  return job;
}

exportRoutes.post("/", doc({ summary: "Start an export of every conversation (a background job)", responses: { 202: { description: "The job, queued", schema: exportSchema } } }), async (c) => {
  const tenantId = c.get("tenantId");
  const job: ExportJob = { id: sortableId("exp"), status: "queued", format: "jsonl", createdAt: new Date().toISOString(), startedAt: null, finishedAt: null, conversations: 0, bytes: 0, error: null };
  await writeExportJob(c.env.BUCKET, tenantId, job);
  await c.env.EXPORT_QUEUE.send({ kind: "export", tenantId, exportId: job.id });
  return c.json(view(job), 202);
});

exportRoutes.get("/:id", doc({ summary: "An export job's status (with its download link once done)", responses: { 200: { description: "The job", schema: exportSchema } } }), async (c) => c.json(view(await jobFor(c))));

exportRoutes.get(
  "/:id/download",
  doc({ summary: "Download a finished export (JSONL: each conversation's export lines, its conversation line first)", responses: { 200: { description: "The export", content: { "application/x-ndjson": { schema: { type: "string" } } } } } }),
  async (c) => {
    const job = await jobFor(c);
    const obj = job.status === "done" ? await c.env.BUCKET.get(exportDataKey(c.get("tenantId"), job.id)) : null;
    if (!obj) throw notFound("export download");
    return new Response(obj.body, { headers: { "content-type": EXPORT_MEDIA_TYPES.jsonl, "content-length": String(obj.size), "content-disposition": `attachment; filename="${job.id}.jsonl"` } });
  },
);
