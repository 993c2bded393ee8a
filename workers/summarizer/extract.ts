// One chunk of a PDF's first-search indexing: extract a page range through ranged R2 reads and
// upsert the pages into the cortex. Idempotent (doc ids per page), so a redelivered chunk only
// rewrites the same rows; when the last page lands the attachment is marked indexed. A chunk of a
// deleted attachment writes nothing that stays (see attachments/delete.ts).
import { readPdfPages, usePdfjsCMaps } from "../../services/attachments/formats/pdf/read";
import { BundledCMaps } from "../../services/attachments/formats/pdf/cmaps";
import type { ExtractJob } from "../../core/jobs";
import { countIndexedPages, pageRef, upsertDocs } from "../../services/cortex";
import { r2RangeReader } from "../../services/attachments/r2-range-reader";
import { pageRefPattern } from "../../services/attachments/delete";
import { getAttachmentRow, markIndexed, toAttachment } from "../../services/attachments/store";

// Pages indexed here read CJK fonts through pdf.js's predefined CMaps, as pdf_read does in chat.
usePdfjsCMaps(BundledCMaps);

export async function runExtractJob(job: ExtractJob, env: Env): Promise<{ pages: number; indexed: number }> {
  const row = await getAttachmentRow(env.DB, job.tenantId, job.attachmentId);
  if (!row) return { pages: 0, indexed: 0 }; // deleted since: nothing to do
  const reader = await r2RangeReader(env.BUCKET, row.r2Key);
  if (!reader) return { pages: 0, indexed: 0 };
  const { pages } = await readPdfPages(reader, job.fromPage, job.toPage);
  await upsertDocs(
    env.DB,
    pages.map((p) => ({
      tenantId: job.tenantId,
      kind: "page" as const,
      refId: pageRef(row.id, p.page),
      conversationId: row.conversationId,
      seq: p.page,
      role: null,
      createdAt: row.createdAt,
      body: `${row.name} page ${p.page}\n${p.text}`,
    })),
  );
  // Deleted while the pages were read: the delete may have swept before these landed, so they go
  // here. (A row still present means its delete, if any, sweeps after this upsert.)
  if (!(await getAttachmentRow(env.DB, job.tenantId, row.id))) {
    await env.DB.prepare(`DELETE FROM cortex_docs WHERE tenant_id = ? AND kind = 'page' AND ref_id LIKE ?`).bind(job.tenantId, pageRefPattern(row.id)).run();
    return { pages: 0, indexed: 0 };
  }
  const indexed = await countIndexedPages(env.DB, job.tenantId, row.id);
  const total = toAttachment(row).facts.pageCount ?? 0;
  if (total && indexed >= total)
    await markIndexed(env.DB, job.tenantId, row.id);
  return { pages: pages.length, indexed };
}
