/**
 * Web search and web fetch, the server tools, as the real API returns them
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool, …/web-fetch-tool):
 * a `server_tool_use` (id `srvtoolu_…`), its result block right after it, then text. Results are
 * deterministic, derived from the query or URL; each search result's `encrypted_content` and each
 * citation's `encrypted_index` is sealed (signing.ts) so an edited one is refused when sent back.
 */
import { hashSeed, idFrom } from "./hash";
import { prose } from "./reply";
import { open, seal } from "./signing";
import type { WireBlock, WireTool } from "./wire";

export type Block = WireBlock;
const DIRECT = { type: "direct" } as const;
const SEARCH = "web-search-result";
const INDEX = "web-search-citation";
const DOMAINS = ["docs.example.com", "news.example.org", "wiki.example.net", "blog.example.io", "research.example.edu"];
/** Fixed, so the same request gives the same bytes. */
export const RETRIEVED_AT = "2026-12-01T00:00:00Z";

export function serverTool(tools: readonly WireTool[] | undefined, name: "web_search" | "web_fetch"): WireTool | null {
  return (
    (tools ?? []).find(
      (tool) => typeof tool.type === "string" && tool.type.startsWith(`${name}_`) && tool.name === name,
    ) ?? null
  );
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 48) || "page";
const title = (query: string, k: number) =>
  `${query.replace(/\s+/g, " ").trim().slice(0, 60)} (${["overview", "guide", "notes", "reference", "digest"][k % 5]})`;

function domainsFor(tool: WireTool, query: string): string[] {
  const allowed = Array.isArray(tool.allowed_domains) ? (tool.allowed_domains as string[]) : [];
  if (allowed.length > 0) return allowed.map((d) => d.split("/")[0]);
  const blocked = Array.isArray(tool.blocked_domains) ? (tool.blocked_domains as string[]) : [];
  const open = DOMAINS.filter((d) => !blocked.some((b) => d === b || d.endsWith(`.${b}`)));
  const start = hashSeed(query) % Math.max(1, open.length);
  return [...open.slice(start), ...open.slice(0, start)];
}

export interface SearchHit {
  url: string;
  title: string;
  text: string;
}

/** The page text a result stands for (what citations quote). */
export const pageText = (url: string, pageTitle: string): string => `${pageTitle}. ${prose(240, url)}`;

/**
 * A call past the tool's `max_uses`: the result block is an error object, not results ("If Claude
 * attempts more searches than allowed, the web_search_tool_result is an error with the
 * max_uses_exceeded error code"; the same for web fetch), and it is not billed.
 */
export function overLimit(
  name: "web_search" | "web_fetch",
  { input, replyId, n }: { input: Record<string, unknown>; replyId: string; n: number },
): Block[] {
  const id = `srvtoolu_${idFrom(`${replyId}:${name}:${n}`)}`;
  return [
    { type: "server_tool_use", id, name, input, caller: DIRECT },
    {
      type: `${name}_tool_result`,
      tool_use_id: id,
      content: { type: `${name}_tool_result_error`, error_code: "max_uses_exceeded" },
      caller: DIRECT,
    },
  ];
}

/** Whether a tool allows another call after `made` of them. */
export const withinMaxUses = (tool: WireTool, made: number): boolean =>
  typeof tool.max_uses !== "number" || made < tool.max_uses;

/** Successful calls in a reply, for usage.server_tool_use. */
export function serverToolCounts(content: readonly Block[]): {
  web_search_requests: number;
  web_fetch_requests: number;
} {
  return {
    web_search_requests: content.filter((b) => b.type === "web_search_tool_result" && Array.isArray(b.content)).length,
    web_fetch_requests: content.filter(
      (b) => b.type === "web_fetch_tool_result" && (b.content as { type?: string })?.type === "web_fetch_result",
    ).length,
  };
}

/** server_tool_use + web_search_tool_result for `query`, and the hits for citing. */
export function webSearch(
  query: string,
  { tool, replyId, n }: { tool: WireTool; replyId: string; n: number },
): { blocks: Block[]; hits: SearchHit[] } {
  const id = `srvtoolu_${idFrom(`${replyId}:search:${n}`)}`;
  const domains = domainsFor(tool, query);
  const hits: SearchHit[] = [0, 1, 2].map((k) => {
    const url = `https://${domains[k % domains.length]}/${slug(query)}${k === 0 ? "" : `-${k + 1}`}`;
    const heading = title(query, k);
    return { url, title: heading, text: pageText(url, heading) };
  });
  const content = hits.map((hit, k) => ({
    type: "web_search_result",
    url: hit.url,
    title: hit.title,
    encrypted_content: seal(SEARCH, { u: hit.url, t: hit.title }),
    page_age: `November ${1 + ((hashSeed(hit.url) + k) % 28)}, 2026`,
  }));
  return {
    blocks: [
      { type: "server_tool_use", id, name: "web_search", input: { query }, caller: DIRECT },
      { type: "web_search_tool_result", tool_use_id: id, content, caller: DIRECT },
    ],
    hits,
  };
}

/** Text blocks answering from search hits, each cited sentence carrying a web_search_result_location citation. */
export function citedAnswer(query: string, hits: readonly SearchHit[]): Block[] {
  const blocks: Block[] = [
    { type: "text", text: `Here is what I found about "${query.replace(/\s+/g, " ").trim().slice(0, 80)}".` },
  ];
  hits.slice(0, 2).forEach((hit, k) => {
    const cited = hit.text.slice(0, 150);
    blocks.push({
      type: "text",
      text: `${k === 0 ? "According to" : "Also,"} ${hit.title}: ${cited}`,
      citations: [
        {
          type: "web_search_result_location",
          url: hit.url,
          title: hit.title,
          encrypted_index: seal(INDEX, { u: hit.url, x: k }),
          cited_text: cited,
        },
      ],
    });
  });
  return blocks;
}

/** The words of a fetched PDF: a few KB of prose, from the address alone. */
const PDF_TEXT_CHARS = 3_000;
const PDF_LINE_CHARS = 90;

/** `text` cut into lines of at most `width` chars, at spaces. */
function lines(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out;
}

/**
 * A small, valid PDF 1.4 holding `text` on one page (catalog, pages, page, content stream, font, a
 * cross-reference table with the objects' byte offsets, trailer): the same bytes for the same text.
 * Returned as base64, the way the API returns a fetched PDF.
 */
export function pdfBase64(text: string): string {
  const pdfString = (line: string) => line.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, "?");
  const shown = lines(text, PDF_LINE_CHARS)
    .map((line) => `(${pdfString(line)}) Tj T*`)
    .join("\n");
  const stream = `BT\n/F1 10 Tf\n12 TL\n56 760 Td\n${shown}\nET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, k) => {
    offsets.push(pdf.length);
    pdf += `${k + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  // Every char is ASCII, so each is one byte and btoa takes the string as it is.
  return btoa(pdf);
}

/** Whether a fetched address is a PDF: its path ends in .pdf (query and fragment aside). */
const isPdfUrl = (url: string): boolean => /\.pdf$/i.test(url.split(/[?#]/)[0]);

/**
 * server_tool_use + web_fetch_tool_result holding the page as a text document, or, for an address
 * ending in .pdf, the PDF as a document with a base64 source, as the API returns one (docs
 * web-fetch-tool: "For PDF documents, the content will be returned as base64-encoded data"). The
 * text returned is what the page or PDF says, for the answer to quote.
 */
export function webFetch(
  url: string,
  { tool, replyId, n }: { tool: WireTool; replyId: string; n: number },
): { blocks: Block[]; text: string } {
  const id = `srvtoolu_${idFrom(`${replyId}:fetch:${n}`)}`;
  const pdf = isPdfUrl(url);
  const heading = `${pdf ? "Paper" : "Page"} at ${url}`;
  const text = pdf ? `${heading}. ${prose(PDF_TEXT_CHARS, url)}` : pageText(url, heading);
  const citations = (tool.citations as { enabled?: boolean } | null | undefined)?.enabled ? { enabled: true } : null;
  const source = pdf
    ? { type: "base64", media_type: "application/pdf", data: pdfBase64(text) }
    : { type: "text", media_type: "text/plain", data: text };
  const document = { type: "document", source, title: heading, citations };
  return {
    blocks: [
      { type: "server_tool_use", id, name: "web_fetch", input: { url }, caller: DIRECT },
      {
        type: "web_fetch_tool_result",
        tool_use_id: id,
        content: { type: "web_fetch_result", url, retrieved_at: RETRIEVED_AT, content: document },
        caller: DIRECT,
      },
    ],
    text,
  };
}

/** The hits of web_search_tool_result blocks sent back (valid ones only), for answering after a pause. */
export function hitsOf(blocks: readonly WireBlock[]): SearchHit[] {
  const hits: SearchHit[] = [];
  for (const block of blocks) {
    if (block.type !== "web_search_tool_result" || !Array.isArray(block.content)) continue;
    for (const item of block.content as WireBlock[]) {
      if (item.type === "web_search_result" && typeof item.url === "string")
        hits.push({
          url: item.url,
          title: String(item.title ?? ""),
          text: pageText(item.url, String(item.title ?? "")),
        });
    }
  }
  return hits;
}

export const searchResultValid = (item: WireBlock): boolean =>
  open<{ u: string; t: string }>(SEARCH, item.encrypted_content)?.u === item.url;
export const citationValid = (citation: Record<string, unknown>): boolean =>
  open<{ u: string }>(INDEX, citation.encrypted_index)?.u === citation.url;
