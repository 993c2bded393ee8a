// A PDF's extracted pages into the cortex (kind `page`), one row per page so a repeat rewrites the
// same rows. Shared by the summarizer's extraction jobs and pdf_search's own reading of a
// password-protected PDF (no queued job may carry a password).
import { MAX_INDEXED_PDF_PAGES } from "../../core/jobs";
import { pageRef } from "../cortex/search-index";
import { type CortexEnv, cortexFor } from "../cortex/routing";
import type { CortexMark } from "../cortex/shard";
import { getAttachmentRow, markIndexed, markIndexProgress, toAttachment, type AttachmentRow } from "./store";

/** What a put of pages answers: how many of the attachment's pages are indexed, and where the write left the shard. */
export interface PagesPut {
  indexed: number;
  /** The pages' shard write (services/cortex/shard.ts written): a search started there finds them. */
  written: CortexMark | null;
}

/** putPdfPages's count alone: the summarizer's extraction jobs, which read nothing after their write. */
export async function indexPdfPages(
  env: CortexEnv,
  row: AttachmentRow,
  pages: readonly { page: number; text: string }[],
): Promise<number | null> {
  return (await putPdfPages(env, row, pages))?.indexed ?? null;
}

/**
 * Upserts the pages and, when every page of the attachment that is ever indexed is in (its first
 * MAX_INDEXED_PDF_PAGES: no page past them is queued), marks it indexed, else stamps the run's
 * progress (store.ts markIndexProgress). Returns how many of its pages are indexed and the bookmark
 * of the write (pdf_search searches the pages it put right after, from there on), or null when the
 * attachment was deleted meanwhile (its pages are then removed here, since the delete may have
 * swept before they landed).
 */
export async function putPdfPages(
  env: CortexEnv,
  row: AttachmentRow,
  pages: readonly { page: number; text: string }[],
): Promise<PagesPut | null> {
  const db = env.DB;
  const cortex = await cortexFor(env, row.tenantId);
  const written = await cortex.index(
    row.tenantId,
    pages.map((p) => ({
      tenantId: row.tenantId,
      kind: "page" as const,
      refId: pageRef(row.id, p.page),
      conversationId: row.conversationId,
      seq: p.page,
      role: null,
      createdAt: row.createdAt,
      body: `${row.name} page ${p.page}\n${p.text}`,
    })),
  );
  // A row still present means its delete, if any, sweeps after this upsert.
  if (!(await getAttachmentRow(db, row.tenantId, row.id))) {
    await cortex.purgeAttachment(row.tenantId, row.id);
    return null;
  }
  // Read at the write's bookmark: a replica that has not seen these pages yet would undercount.
  const indexed = await cortex.countIndexedPages(row.tenantId, row.id, written);
  const total = Math.min(toAttachment(row).facts.pageCount ?? 0, MAX_INDEXED_PDF_PAGES);
  if (total && indexed >= total) await markIndexed(db, row.tenantId, row.id);
  // A run still indexing is alive while its pages land: pdf_search starts again only a stalled one.
  else await markIndexProgress(db, row.tenantId, row.id);
  return { indexed, written: cortex.written };
}
