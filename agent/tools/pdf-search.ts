// pdf_search: find pages of a PDF attachment by words. The first search of a PDF indexes its
// pages into the cortex in chunks through the job queue (no invocation runs long), narrating the
// progress; it answers with what is indexed when it stops waiting, and later searches hit the index.
import { z } from "zod";
import { isId } from "../../core/ids";
import type { ToolDefinition } from "./registry";

const WAIT_MS = 25_000;
const POLL_MS = 1_000;
/** An indexing run that has made no progress for this long is started again. */
const STALL_MS = 10 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const pdfSearch: ToolDefinition<{ attachment_id: string; query: string }> = {
  name: "pdf_search",
  core: false,
  capability: "pdf_search: find pages of a PDF attachment by words or identifiers",
  description: "Search a PDF attachment's pages by words or exact identifiers; returns page numbers with snippets. The first search of a large PDF indexes it first (may take a minute).",
  input: z.strictObject({ attachment_id: z.string().refine((v) => isId("att", v), "not an attachment id (att_…)"), query: z.string().trim().min(1).max(300) }),
  async run({ attachment_id, query }, ctx) {
    const found = await ctx.openAttachment(attachment_id);
    if (!found) return { content: `no attachment ${attachment_id}`, isError: true };
    const { attachment } = found;
    const total = attachment.facts.pageCount;
    if (attachment.facts.kind !== "pdf" || !total) return { content: `${attachment.name} is not a readable PDF${attachment.facts.problem ? `: ${attachment.facts.problem}` : ""}`, isError: true };

    let state = await ctx.pageIndex.status(attachment.id);
    const stalled = state.status === "indexing" && state.startedAt !== null && Date.now() - Date.parse(state.startedAt) > STALL_MS && state.indexed < total;
    if (state.status === "none" || stalled) {
      await ctx.pageIndex.start(attachment.id, total);
      ctx.progress(`First search of ${attachment.name} (${total.toLocaleString("en-US")} pages): indexing its pages first, this may take a minute.`);
      state = await ctx.pageIndex.status(attachment.id);
    }
    const deadline = Date.now() + WAIT_MS;
    let last = -1;
    while (state.indexed < total && Date.now() < deadline) {
      if (state.indexed !== last) ctx.progress(`Indexed ${state.indexed.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} pages of ${attachment.name}…`);
      last = state.indexed;
      await sleep(POLL_MS);
      state = await ctx.pageIndex.status(attachment.id);
    }
    const hits = await ctx.search(query, 10, { kinds: ["page"], refPrefix: `${attachment.id}:p` });
    const partial = state.indexed < total ? `Indexing continues (${state.indexed.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} pages so far): search again shortly for complete results.\n` : "";
    if (!hits.length) return { content: `${partial}No page of ${attachment.name} matches "${query}".` };
    const lines = hits.map((h) => `- page ${h.seq}: ${h.snippet}`);
    return { content: `${partial}${hits.length} pages of ${attachment.name} match "${query}" (read one with pdf_read {"attachment_id":"${attachment.id}","pages":"N"}):\n${lines.join("\n")}` };
  },
};
