// pdf_search: find pages of a PDF attachment by words. The first search of a PDF indexes its
// pages into the cortex in chunks through the job queue (no invocation runs long), narrating the
// progress; it answers with what is indexed when it stops waiting, and later searches hit the index.
// A PDF that needs a user password is read here instead, a chunk at a time with the password the
// call carries: a queued job would have to store it.
import { z } from "zod";
import { isId } from "../../core/ids";
import { MAX_INDEXED_PDF_PAGES } from "../../core/jobs";
import { probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { pdfPassword } from "./attachment-tools";
import { shownSnippet } from "./memory-search";
import type { AttachmentAccess, CallScope, CortexAccess, ToolDefinition, ToolOutput } from "./registry";

const WAIT_MS = 25_000;
const POLL_MS = 1_000;
/** An indexing run that has made no progress for this long is started again. */
const STALL_MS = 10 * 60_000;
/** Pages of a password-protected PDF read per step here (pdf.js reopens the file each step). */
const LOCKED_CHUNK = 25;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n = (x: number) => x.toLocaleString("en-US");
const fail = (err: unknown): ToolOutput => ({
  content: err instanceof Error ? err.message : String(err),
  isError: true,
});

/** What pdf_search uses: the file and its page index, the cortex to search them, progress while indexing. */
type PdfSearchAccess = CallScope & AttachmentAccess & CortexAccess;
type Found = NonNullable<Awaited<ReturnType<AttachmentAccess["openAttachment"]>>>;

/** Queues the indexing on first search and waits a while for it; the pages indexed so far. */
async function indexThroughQueue({ attachment }: Found, total: number, ctx: PdfSearchAccess): Promise<number> {
  let state = await ctx.pageIndex.status(attachment.id);
  // `startedAt`: when the run started or last indexed pages, so a long run still progressing is left to finish.
  const stalled =
    state.status === "indexing" &&
    state.startedAt !== null &&
    Date.now() - Date.parse(state.startedAt) > STALL_MS &&
    state.indexed < total;
  if (state.status === "none" || stalled) {
    await ctx.pageIndex.start(attachment.id, total);
    ctx.progress(
      `First search of ${attachment.name} (${n(total)} pages): indexing its pages first, this may take a minute.`,
    );
    state = await ctx.pageIndex.status(attachment.id);
  }
  const deadline = Date.now() + WAIT_MS;
  let last = -1;
  while (state.indexed < total && Date.now() < deadline) {
    if (state.indexed !== last) ctx.progress(`Indexed ${n(state.indexed)} of ${n(total)} pages of ${attachment.name}…`);
    last = state.indexed;
    await sleep(POLL_MS);
    state = await ctx.pageIndex.status(attachment.id);
  }
  return state.indexed;
}

/** Reads and indexes the pages not yet indexed, in order, until done or out of time. */
async function indexHere(
  { attachment, reader }: Found,
  { total, password, ctx }: { total: number; password: string; ctx: PdfSearchAccess },
): Promise<number | null> {
  let indexed = (await ctx.pageIndex.status(attachment.id)).indexed;
  const deadline = Date.now() + WAIT_MS;
  if (indexed < total)
    ctx.progress(`First search of ${attachment.name} (${n(total)} pages): reading its pages with the password given.`);
  while (indexed < total && Date.now() < deadline) {
    const { pages } = await readPdfPages(reader, {
      from: indexed + 1,
      to: Math.min(total, indexed + LOCKED_CHUNK),
      password,
    });
    const now = await ctx.pageIndex.put(attachment.id, pages);
    if (now === null) return null;
    indexed = now;
    ctx.progress(`Indexed ${n(indexed)} of ${n(total)} pages of ${attachment.name}…`);
  }
  return indexed;
}

export const pdfSearch: ToolDefinition<{ attachment_id: string; query: string; password?: string }, PdfSearchAccess> = {
  name: "pdf_search",
  core: false,
  capability: "pdf_search: find pages of a PDF attachment by words or identifiers",
  description:
    "Search a PDF attachment's pages by words or exact identifiers; returns page numbers with snippets. The first search of a large PDF indexes it first (may take a minute).",
  input: z.strictObject({
    attachment_id: z.string().refine((v) => isId("att", v), "not an attachment id (att_…)"),
    query: z.string().trim().min(1).max(300),
    password: pdfPassword,
  }),
  secretInputs: ["password"],
  async run({ attachment_id, query, password }, ctx) {
    const found = await ctx.openAttachment(attachment_id);
    if (!found) return { content: `no attachment ${attachment_id}`, isError: true };
    const { attachment } = found;
    const locked = attachment.facts.kind === "pdf" && attachment.facts.passwordRequired === true;
    if (locked && password === undefined)
      return {
        content: `${attachment.name} is encrypted; ask the user for the password and pass it as "password"`,
        isError: true,
      };
    let total = attachment.facts.pageCount;
    let indexed: number | null;
    try {
      // The stored count of a locked file may be 0 (its catalog is encrypted): the password tells.
      if (locked) total = (await probePdf(found.reader, { password })).pageCount;
      if (attachment.facts.kind !== "pdf" || !total)
        return {
          content: `${attachment.name} is not a readable PDF${attachment.facts.problem ? `: ${attachment.facts.problem}` : ""}`,
          isError: true,
        };
      // The index covers a PDF's first MAX_INDEXED_PDF_PAGES pages: the pages past them are no
      // indexing still to wait for (nor a stall to queue again).
      const indexable = Math.min(total, MAX_INDEXED_PDF_PAGES);
      indexed = locked
        ? await indexHere(found, { total: indexable, password: password!, ctx })
        : await indexThroughQueue(found, indexable, ctx);
    } catch (err) {
      return fail(err);
    }
    if (indexed === null) return { content: `no attachment ${attachment_id}`, isError: true };
    const hits = await ctx.search(query, 10, { kinds: ["page"], refPrefix: `${attachment.id}:p` });
    const partial =
      indexed < Math.min(total, MAX_INDEXED_PDF_PAGES)
        ? `Indexing continues (${n(indexed)} of ${n(total)} pages so far): search again${locked ? " with the password" : ""} shortly for complete results.\n`
        : total > MAX_INDEXED_PDF_PAGES
          ? `Only its first ${n(MAX_INDEXED_PDF_PAGES)} of ${n(total)} pages are searched; read later ones with pdf_read.\n`
          : "";
    if (!hits.length) return { content: `${partial}No page of ${attachment.name} matches "${query}".` };
    const lines = hits.map((h) => `- page ${h.seq}: ${shownSnippet(h).snippet}`);
    const read = `pdf_read {"attachment_id":"${attachment.id}","pages":"N"${locked ? ',"password":"..."' : ""}}`;
    return {
      content: `${partial}${hits.length} pages of ${attachment.name} match "${query}" (read one with ${read}):\n${lines.join("\n")}`,
    };
  },
};
