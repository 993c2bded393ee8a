// memory_search: the cortex (BM25 over every stored message of the tenant, folded or not, the
// memory notes, the fold episodes and indexed PDF pages) as a tool. Each hit names the call that returns it whole.
import { z } from "zod";
import { sliceWhole } from "../../core/text-cut";
import { cutMarkedSnippet, MATCH_OPEN, type SearchHit, SNIPPET_CHARS } from "../../services/cortex/search-index";
import type { CallScope, CortexAccess, ToolAccess, ToolDefinition } from "./registry";

const input = z.strictObject({
  query: z.string().trim().min(1).max(500).describe("words or exact identifiers to find"),
  limit: z.number().int().min(1).max(20).optional().describe("default 5"),
  said: z
    .enum(["user", "assistant"])
    .optional()
    .describe(
      "whose words to look for: the person's (default) or yours; unset, a query like 'you suggested ...' looks for yours",
    ),
});
type Input = z.infer<typeof input>;

export const memorySearch: ToolDefinition<Input, CallScope & CortexAccess & ToolAccess> = {
  name: "memory_search",
  core: true,
  capability:
    "memory_search: find stored messages, notes, episodes and indexed PDF pages by words or exact identifiers",
  description:
    "Search your memory: every stored message of your conversations (including turns folded into a summary or stubbed), your saved notes, the episodes (summaries) of folded history, and the pages of PDFs already indexed by pdf_search. " +
    "Matches words (stemmed), names, ids, file names and numbers. Returns ranked snippets; each names the call that returns the full original. " +
    'How to search well: put the subject words the original would contain, not the question ("commute minutes work", not "how long did I say my commute was"); add the likely words of the answer and synonyms ("bike bicycle cycling"); keep identifiers exact; search again with other words if the first hits miss; ' +
    'the person\'s own messages rank first — set said:"assistant" to find what you yourself said earlier.',
  input,
  async run(args, ctx) {
    const hits = await ctx.search(args.query, args.limit ?? 5, args.said ? { said: args.said } : undefined);
    if (!hits.length) return { content: `no memory matches "${args.query}"` };
    return {
      content: `${hits.length} matches for "${args.query}":\n${hits.map((h, i) => describeHit(h, { n: i + 1, current: ctx.conversationId, activeTools: ctx.activeTools })).join("\n")}`,
    };
  },
};

/**
 * Every kind of hit names a call that returns it whole, in this conversation (`current`), with the
 * tools active now; `n` is its place in the list.
 */
function describeHit(h: SearchHit, where: { n: number; current: string; activeTools: readonly string[] }): string {
  const { n, current, activeTools } = where;
  const day = h.createdAt.slice(0, 10);
  // One line per hit, so its "full text:" line always follows it. The snippet is the index's, cut
  // and marked already (shownSnippet): cutting it again would take a text's own U+E000 for a mark.
  h = { ...h, snippet: shownSnippet(h).snippet.replace(/\s+/g, " ") };
  if (h.kind === "page") {
    // A page's ref id is `<attachment id>:p<page>`; the page is read back through pdf_read.
    const attachmentId = h.id.slice(0, h.id.indexOf(":"));
    const read = `pdf_read ${JSON.stringify({ attachment_id: attachmentId, pages: String(h.seq) })}`;
    const call = activeTools.includes("pdf_read") ? read : `tool_activate {"name":"pdf_read"}, then ${read}`;
    return `${n}. page ${h.seq} of PDF ${attachmentId} (${day}): ${h.snippet}\n   full text: ${call}`;
  }
  if (h.kind === "memory")
    return `${n}. note ${h.id} (${day}): ${h.snippet}\n   full text: memory_get {"id":"${h.id}"}`;
  if (h.kind === "episode")
    return `${n}. episode of conversation ${h.conversationId} through seq ${h.seq} (${day}): ${h.snippet}\n   full text: memory_get {"id":"${h.id}"}`;
  const place = h.conversationId === current ? "this conversation" : `conversation ${h.conversationId}`;
  const read = JSON.stringify({ conversation_id: h.conversationId, message_id: h.id });
  // A message a regenerate replaced is kept, but the person threw that version away: never quoted as standing.
  const replaced = h.superseded ? " (replaced by a regenerated reply)" : "";
  return `${n}. ${place}, seq ${h.seq} (${whose(h)}, ${day})${replaced}: ${h.snippet}\n   full text: conversation_read ${read}`;
}

/**
 * Whose words a message hit holds, from its `from`: its transcript role says `user` for a message
 * that carries tool results, or a sub-agent's task, though no person typed it, and the model must
 * not credit the person with them. The person's and the assistant's read "user" and "assistant".
 */
function whose(h: SearchHit): string {
  if (h.from === "tool") return "a tool's result or a sub-agent's task, not the person's words";
  if (h.from === "person") return "user";
  if (h.from === "assistant") return "assistant";
  return h.role ?? "unknown";
}

/** The most characters of a hit's snippet shown: the cortex's snippet counts tokens, and a token may be any length. */
export { SNIPPET_CHARS };

/**
 * A hit's snippet as shown, with where its `[match]`es are. The index's hit comes cut around its
 * match and marked `[match]`, its matches listed: it is shown as it is, never cut again, since a
 * text's own U+E000/U+E001 stay in it and a second cut would take them for the index's marks. A hit
 * without `matches` (found by meaning alone: its document's start, unmarked) marks nothing; it is
 * only cut from its start when longer than SNIPPET_CHARS, its brackets and private-use characters
 * being the text's own.
 */
export function shownSnippet(h: Pick<SearchHit, "snippet" | "matches">): {
  snippet: string;
  matches: [number, number][];
} {
  if (h.matches) return { snippet: h.snippet, matches: h.matches };
  const snippet = h.snippet.length <= SNIPPET_CHARS ? h.snippet : `${sliceWhole(h.snippet, 0, SNIPPET_CHARS)}…`;
  return { snippet, matches: [] };
}

/**
 * `snippet` cut to about `max` characters around its first match (each cut end marked "…"), at
 * whole characters; a match longer than that is shown from its start and closed with "…]". A
 * snippet still marked as FTS5 marks it (MATCH_OPEN/MATCH_CLOSE) is cut around the real match and
 * then shown as `[match]` (cutMarkedSnippet). A search hit's snippet comes cut that way already and
 * is shown through shownSnippet, not this: it may hold the text's own U+E000/U+E001, which this would
 * take for marks. Only a snippet marked `[match]` is cut at its first "[", which may be the text's own.
 */
export function cutSnippet(snippet: string, max = SNIPPET_CHARS): string {
  if (snippet.includes(MATCH_OPEN)) return cutMarkedSnippet(snippet, max).snippet;
  if (snippet.length <= max) return snippet;
  const open = Math.max(0, snippet.indexOf("["));
  const close = snippet[open] === "[" ? snippet.indexOf("]", open) : -1;
  const matchEnd = close < 0 ? open : close + 1;
  // Some words before the match (a third of the window), fewer when the match itself is long.
  const lead = Math.max(0, Math.min(Math.floor(max / 3), max - (matchEnd - open)));
  const start = Math.max(0, Math.min(open - lead, snippet.length - max));
  const end = start + max;
  const shown = sliceWhole(snippet, start, end);
  const tail = end >= snippet.length ? "" : close >= end ? "…]" : "…";
  return `${start > 0 ? "…" : ""}${shown}${tail}`;
}
