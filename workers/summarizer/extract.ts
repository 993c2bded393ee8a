// One chunk of a PDF's first-search indexing: extract a page range through ranged R2 reads and
// upsert the pages into the cortex. Idempotent (doc ids per page), so a redelivered chunk only
// rewrites the same rows; when the last page lands the attachment is marked indexed. A chunk of a
// deleted attachment writes nothing that stays (see attachments/delete.ts).
import { readPdfPages, usePdfjsCMaps } from "../../services/attachments/formats/pdf/read";
import { BundledCMaps } from "../../services/attachments/formats/pdf/cmaps.gen";
import type { ExtractJob } from "../../core/jobs";
import { indexPdfPages } from "../../services/attachments/page-index";
import { r2RangeReader } from "../../services/attachments/r2-range-reader";
import { getAttachmentRow } from "../../services/attachments/store";

// Pages indexed here read CJK fonts through pdf.js's predefined CMaps, as pdf_read does in chat.
usePdfjsCMaps(BundledCMaps);

export async function runExtractJob(job: ExtractJob, env: Env): Promise<{ pages: number; indexed: number }> {
  const row = await getAttachmentRow(env.DB, job.tenantId, job.attachmentId);
  if (!row) return { pages: 0, indexed: 0 }; // deleted since: nothing to do
  const reader = await r2RangeReader(env.BUCKET, row.r2Key);
  if (!reader) return { pages: 0, indexed: 0 };
  // One page no reader can read must not fail the chunk's other pages (it would be retried, then
  // dead-lettered, and the search never completes): it is indexed empty.
  const { pages } = await readPdfPages(reader, { from: job.fromPage, to: job.toPage, skipUnreadable: true });
  const indexed = await indexPdfPages(env, row, pages);
  return indexed === null ? { pages: 0, indexed: 0 } : { pages: pages.length, indexed };
}
