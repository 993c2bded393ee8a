// /v1/exports: a tenant-wide export of every conversation, run as a queued job (export-runner.ts)
// rather than inside a request, downloaded as one JSONL object once done, and kept until the
// retention removes it (the cron, scheduled.ts) or the tenant deletes it.
import { Hono } from "hono";
import { isId, sortableId } from "../../../core/ids";
import { exportDataKey } from "../../../r2-layout";
import {
  createExportJob,
  exportRetentionMs,
  getExportJob,
  MAX_ACTIVE_EXPORTS,
  removeExportJob,
  type ExportJob,
} from "../../../services/transfer/export-job";
import { EXPORT_MEDIA_TYPES } from "../../../services/transfer/export-format";
import { ApiError, notFound } from "../errors";
import { doc } from "../openapi/registry";
import { z } from "zod";
import type { AppEnv } from "../types";

const exportSchema = z
  .looseObject({
    id: z.string(),
    status: z.enum(["queued", "running", "done", "failed"]),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    expiresAt: z.string(),
    conversations: z.number().int(),
    bytes: z.number().int(),
    error: z.string().nullable(),
    download: z.string().nullable(),
  })
  .meta({
    id: "Export",
    description: "A tenant-wide export job: status, counts, when it expires, and its download link once done.",
  });

export const exportRoutes = new Hono<AppEnv>();

const view = (job: ExportJob) => ({
  ...job,
  download: job.status === "done" ? `/v1/exports/${job.id}/download` : null,
});

async function jobFor(c: {
  env: Env;
  get(k: "tenantId"): string;
  req: { param(k: "id"): string };
}): Promise<ExportJob> {
  const id = c.req.param("id");
  const job = isId("exp", id) ? await getExportJob(c.env.DB, { tenantId: c.get("tenantId"), id }) : null;
  if (!job) throw notFound("export");
  return job;
}

exportRoutes.post(
  "/",
  doc({
    summary: "Start an export of every conversation (a background job)",
    description: `At most ${MAX_ACTIVE_EXPORTS} queued or running export per tenant: another is a 409 naming the one in the way (wait for it, or delete it). A job and its file are removed after the retention (\`expiresAt\`).`,
    responses: { 202: { description: "The job, queued", schema: exportSchema } },
  }),
  async (c) => {
    const tenantId = c.get("tenantId");
    const created = await createExportJob(c.env.DB, {
      tenantId,
      id: sortableId("exp"),
      retentionMs: exportRetentionMs(c.env),
    });
    if (created.kind === "blocked") {
      const which = created.active ? ` (${created.active})` : "";
      throw new ApiError(
        409,
        "conflict",
        `this tenant already has ${MAX_ACTIVE_EXPORTS} export queued or running${which}, the most it may have; wait for it to finish or delete it first`,
      );
    }
    try {
      await c.env.EXPORT_QUEUE.send({ kind: "export", tenantId, exportId: created.job.id });
    } catch (err) {
      // A job nothing will run would hold the tenant's slot until it expired.
      await removeExportJob(c.env.DB, c.env.BUCKET, { tenantId, id: created.job.id });
      throw err;
    }
    return c.json(view(created.job), 202);
  },
);

exportRoutes.get(
  "/:id",
  doc({
    summary: "An export job's status (with its download link once done)",
    responses: { 200: { description: "The job", schema: exportSchema } },
  }),
  async (c) => c.json(view(await jobFor(c))),
);

exportRoutes.delete(
  "/:id",
  doc({
    summary: "Delete an export job and its file (a queued or running one is cancelled)",
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const id = c.req.param("id");
    if (!isId("exp", id) || !(await removeExportJob(c.env.DB, c.env.BUCKET, { tenantId: c.get("tenantId"), id })))
      throw notFound("export");
    return c.body(null, 204);
  },
);

exportRoutes.get(
  "/:id/download",
  doc({
    summary: "Download a finished export (JSONL: each conversation's export lines, its conversation line first)",
    responses: {
      200: { description: "The export", content: { "application/x-ndjson": { schema: { type: "string" } } } },
    },
  }),
  async (c) => {
    const job = await jobFor(c);
    const obj = job.status === "done" ? await c.env.BUCKET.get(exportDataKey(c.get("tenantId"), job.id)) : null;
    if (!obj) throw notFound("export download");
    return new Response(obj.body, {
      headers: {
        "content-type": EXPORT_MEDIA_TYPES.jsonl,
        "content-length": String(obj.size),
        "content-disposition": `attachment; filename="${job.id}.jsonl"`,
      },
    });
  },
);
