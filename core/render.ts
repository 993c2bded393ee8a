// Text renderings of stored messages: what the cortex indexes and what conversation_read pages
// through. A single-block message renders as that block's own text, byte for byte.
import { WEB_FETCH_MAX_CONTENT_TOKENS } from "./model-params";
import type { ContentBlock, ServerToolResultBlock, StoredMessage, ToolResultBlock } from "./types";

export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return block.content.map((b) => (b.type === "text" ? b.text : `[image ${imageLabel(b)}]`)).join("\n");
}

function imageLabel(block: ContentBlock): string {
  if (block.type !== "image") return "";
  return block.source.type === "base64"
    ? `${block.source.media_type}, ${block.source.data.length} base64 chars`
    : block.source.url;
}

/** The raw text of one block: the text itself, a tool result's content, a tool call's JSON input. */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "tool_result":
      return toolResultText(block);
    case "tool_use":
      return JSON.stringify(block.input);
    case "image":
      return `[image ${imageLabel(block)}]`;
    case "thinking":
      return block.thinking;
    case "redacted_thinking":
      return "[redacted thinking]";
    case "server_tool_use":
      return JSON.stringify(block.input);
    default:
      return serverResultText(block);
  }
}

/**
 * A server tool's result as readable text: a search's titles and addresses (the page text itself is
 * encrypted), a fetched document's text, or the output of code the API ran.
 */
export function serverResultText(block: ServerToolResultBlock): string {
  const content = block.content as Record<string, unknown> | Record<string, unknown>[] | null;
  if (Array.isArray(content)) {
    return content
      .map((r) =>
        r && typeof r === "object" && typeof r.url === "string"
          ? `${typeof r.title === "string" ? r.title : r.url} — ${r.url}`
          : "",
      )
      .filter(Boolean)
      .join("\n");
  }
  if (content && typeof content === "object") {
    if (typeof content.error_code === "string") return `[error: ${content.error_code}]`;
    const doc = content.content as { source?: { type?: string; data?: unknown }; title?: unknown } | undefined;
    const url = typeof content.url === "string" ? content.url : "";
    if (doc?.source?.type === "text" && typeof doc.source.data === "string")
      return [url, doc.source.data].filter(Boolean).join("\n");
    if (url) return url;
    const out = ["stdout", "stderr"]
      .map((k) => content[k])
      .filter((v): v is string => typeof v === "string" && v !== "");
    if (out.length) return out.join("\n");
  }
  return "";
}

function blockHeader(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return "";
    case "tool_result":
      return `[tool_result ${block.tool_use_id}${block.is_error ? " error" : ""}]\n`;
    case "tool_use":
      return `[tool_use ${block.name} ${block.id}] `;
    case "image":
      return "";
    case "thinking":
      return "[thinking] ";
    case "redacted_thinking":
      return "";
    case "server_tool_use":
      return `[server_tool_use ${block.name} ${block.id}] `;
    default:
      return `[${block.type} ${block.tool_use_id}]\n`;
  }
}

/** One message as text. A single text or tool-result block is returned verbatim, with no header; thinking is left out. */
export function renderMessageText(message: Pick<StoredMessage, "content">): string {
  // Thinking is kept in the record (History, exports, conversation_read of one block) but is the
  // model's working, not the conversation: the index, excerpts and full-message reads leave it out.
  const blocks = message.content.filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
  if (blocks.length === 1 && (blocks[0].type === "text" || blocks[0].type === "tool_result"))
    return blockText(blocks[0]);
  return blocks.map((b) => blockHeader(b) + blockText(b)).join("\n");
}

/** Characters a message contributes to a replay; the unit of the fold threshold and the estimates. */
/**
 * A thinking block weighs its visible text and its signature (or encrypted data): it goes back on
 * later requests while its prefix holds (core/thinking-guard.ts), where the API counts the full
 * reasoning as input. The text is empty under display "omitted", so the signature, which grows with
 * the reasoning it seals, is the stand-in for what cannot be seen. A server tool's result weighs what
 * it replays: it may not be altered, so it rides every request until a fold takes its turn away.
 */
export function messageChars(message: Pick<StoredMessage, "content">): number {
  let n = 0;
  for (const b of message.content) {
    if (b.type === "tool_use" || b.type === "server_tool_use") n += b.name.length + JSON.stringify(b.input).length;
    else if (b.type === "thinking") n += b.thinking.length + b.signature.length;
    else if (b.type === "redacted_thinking") n += b.data.length;
    else if (b.type === "text" || b.type === "tool_result" || b.type === "image") n += blockText(b).length;
    else n += serverResultChars(b);
  }
  return n;
}

/**
 * Chars a token of a fetched PDF weighs: 1.5, the most any catalog model's chars per token comes to
 * (models/lookup.ts charsPerTokenFor, 1.5 / tokenizerRatio), so the allowance is never lighter than
 * the tokens the API counts for it on any model.
 */
const FETCHED_DOCUMENT_CHARS_PER_TOKEN = 1.5;

/**
 * The base64 data of the PDF a web fetch returned, or null for any other server tool result. The
 * API returns a fetched PDF as a document with a base64 source (docs web-fetch-tool: "For PDF
 * documents, the content will be returned as base64-encoded data"), a web page as text.
 */
export function fetchedDocumentData(block: ServerToolResultBlock): string | null {
  if (block.type !== "web_fetch_tool_result") return null;
  const result = block.content as { content?: { type?: unknown; source?: { type?: unknown; data?: unknown } } } | null;
  const source = result?.content?.type === "document" ? result.content.source : undefined;
  return source?.type === "base64" && typeof source.data === "string" ? source.data : null;
}

/**
 * The tokens the API counts for a fetched PDF of `base64Length` chars of base64: its bytes (3/4 of
 * the base64) at 4 bytes a token, the rule of the web fetch docs' own figures ("a research paper
 * PDF (500kB) ≈ 125,000 tokens", 10kB page ≈ 2,500), and never more than the max_content_tokens the
 * request asks (the API truncates the fetched content to it).
 */
export function fetchedDocumentTokens(base64Length: number): number {
  const bytes = Math.floor((base64Length * 3) / 4);
  return Math.min(WEB_FETCH_MAX_CONTENT_TOKENS, Math.ceil(bytes / 4));
}

/** A server tool result's JSON with a fetched PDF's base64 data left out: its readable part. */
export function serverResultReadable(block: ServerToolResultBlock): string {
  const data = fetchedDocumentData(block);
  return JSON.stringify(block.content, (key, value) => (key === "data" && value === data ? "" : value));
}

/**
 * What a server tool's result weighs: its JSON, as it replays; a fetched PDF its readable part plus
 * an allowance for the tokens the API counts for the document (fetchedDocumentTokens), never the
 * length of its base64, which is up to 50 times what the API counts.
 */
function serverResultChars(block: ServerToolResultBlock): number {
  const data = fetchedDocumentData(block);
  if (data === null) return JSON.stringify(block.content).length;
  return (
    serverResultReadable(block).length +
    Math.ceil(fetchedDocumentTokens(data.length) * FETCHED_DOCUMENT_CHARS_PER_TOKEN)
  );
}

/** The shape of an attachment's reference note (services/attachments/note.ts). */
const ATTACHMENT_NOTE = /^<attachment id="att_[0-9A-Za-z]+" name="[^\n]*">\n[\s\S]*\n<\/attachment>$/;

/**
 * A user message that is only attachment notes: an upload saved between turns, or during a paused
 * turn. It rides with the prompt after it on the wire, so it is no exchange of its own: the stub
 * watermark does not count it, and a regenerate does not take it for the prompt.
 */
export function isAttachmentNote(message: Pick<StoredMessage, "role" | "content">): boolean {
  return (
    message.role === "user" &&
    message.content.length > 0 &&
    message.content.every((b) => b.type === "text" && ATTACHMENT_NOTE.test(b.text))
  );
}

/** True for a user message made only of tool results: a carrier, not a real user prompt. */
export function isToolResultCarrier(message: Pick<StoredMessage, "role" | "content">): boolean {
  return (
    message.role === "user" && message.content.length > 0 && message.content.every((b) => b.type === "tool_result")
  );
}
