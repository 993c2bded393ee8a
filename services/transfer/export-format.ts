// A conversation's export as text, produced piece by piece so no format ever holds the whole
// transcript: JSON (one document, messages last), JSONL (metadata lines with a `type`, then one
// stored message per line, which the import reads back as is) and Markdown (for people). Messages
// are written exactly as stored; the import's round trip keeps every field but the message ids.
import type { StoredMessage } from "../../core/types";
import { blockText } from "../../core/render";
import { withoutHidden } from "../../core/visible-text";

export type ExportFormat = "json" | "jsonl" | "markdown";
export const EXPORT_FORMAT_ID = "context-chat.export/1";

export interface ExportAttachment {
  id: string;
  name: string;
  type: string;
  size: number;
  createdAt: string;
  /** Where the bytes download from (GET …/attachments/:id/content, with the API key). */
  url: string;
}

export interface ExportEpisode {
  id: string;
  foldJobId: string;
  throughSeq: number;
  summary: string;
  at: string;
}

/** What an export is made of; the iterables are read once, in order. */
export interface ExportSource {
  conversation: { id: string; title: string } & Record<string, unknown>;
  episodes: ExportEpisode[];
  cards: AsyncIterable<unknown>;
  attachments: AsyncIterable<ExportAttachment>;
  /** A message a regenerate replaced carries `superseded: true` and `supersededBy`, as GET …/messages shows it. */
  messages: AsyncIterable<StoredMessage & { superseded?: true; supersededBy?: string }>;
}

export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  json: "application/json; charset=utf-8",
  jsonl: "application/x-ndjson; charset=utf-8",
  markdown: "text/markdown; charset=utf-8",
};

export async function* exportText(
  source: ExportSource,
  format: ExportFormat,
  exportedAt = new Date().toISOString(),
): AsyncGenerator<string> {
  if (format === "json") yield* asJson(source, exportedAt);
  else if (format === "jsonl") yield* asJsonl(source, exportedAt);
  else yield* asMarkdown(source, exportedAt);
}

async function* asJson(s: ExportSource, exportedAt: string): AsyncGenerator<string> {
  yield `{"format":${JSON.stringify(EXPORT_FORMAT_ID)},"exportedAt":${JSON.stringify(exportedAt)},"conversation":${JSON.stringify(s.conversation)},"episodes":${JSON.stringify(s.episodes)},\n"cards":[`;
  yield* joined(s.cards);
  yield `],\n"attachments":[`;
  yield* joined(s.attachments);
  yield `],\n"messages":[`;
  yield* joined(s.messages);
  yield "]}\n";
}

async function* joined(items: AsyncIterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const item of items) {
    yield `${first ? "\n" : ",\n"}${JSON.stringify(item)}`;
    first = false;
  }
  if (!first) yield "\n";
}

async function* asJsonl(s: ExportSource, exportedAt: string): AsyncGenerator<string> {
  yield `${JSON.stringify({ type: "conversation", format: EXPORT_FORMAT_ID, exportedAt, ...s.conversation })}\n`;
  // Cards and attachments have a `type` of their own: each rides under its kind's name.
  for (const e of s.episodes) yield `${JSON.stringify({ type: "episode", episode: e })}\n`;
  for await (const c of s.cards) yield `${JSON.stringify({ type: "card", card: c })}\n`;
  for await (const a of s.attachments) yield `${JSON.stringify({ type: "attachment", attachment: a })}\n`;
  // Message lines carry no `type`: each is a stored message, importable line by line.
  for await (const m of s.messages) yield `${JSON.stringify(m)}\n`;
}

/** A fence longer than any backtick run inside, so content never closes it. */
function fenced(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

/**
 * Text someone wrote, as markdown that cannot change the export's own structure: its headings move
 * below the export's three levels (`#` → `####`), a setext underline and the start of an HTML block
 * are escaped, at the top level and inside block quotes and list items alike, however nested and on
 * an item's later lines too, and a code fence it leaves open is closed at its end (it would swallow
 * the messages after it). Code (in a fence, in a quote's or a list item's fence, indented) stays as
 * written. The containers are read as CommonMark reads them (§5): a quote goes on while its lines
 * start with `>`, a list item while they are indented to its content (or blank, once it holds
 * something), either one on a lazy line of its paragraph; a fence ends with the first of its
 * containers that does. Lines end where CommonMark ends them (§2.1: "\n", "\r\n" or a bare "\r";
 * U+2028 and U+2029 end none), and each keeps its own ending, so the text is the one written but for
 * the escapes.
 */
function inMessage(text: string): string {
  const out: string[] = [];
  // The block quotes and list items open, outermost first, and whether the innermost has a paragraph.
  let open: Container[] = [];
  let paragraph = false;
  let fence: Fence | null = null;
  // Lines and their endings in turn: [line, ending, line, …, last line].
  const pieces = text.split(/(\r\n|\r|\n)/);
  for (let i = 0; i < pieces.length; i += 2) {
    const line = pieces[i];
    const ending = pieces[i + 1] ?? "";
    const wide = line.includes("\t") ? detab(line) : line;
    if (fence) {
      const inside = continued(wide, fence.open);
      if (inside.matched === fence.open.length) {
        out.push(line + ending);
        if (closes(inside.rest, fence)) fence = null;
        continue;
      }
      fence = null;
    }
    const { matched, rest } = continued(wide, open);
    const opened: Container[] = [];
    const reading = readLine(rest, { opened, paragraph: paragraph && matched === open.length });
    // A line going on with the paragraph (lazily, past containers it does not continue) leaves them open.
    const lazy: boolean = paragraph && !opened.length && PARAGRAPH_TEXT.has(reading.kind);
    if (!lazy) open = [...open.slice(0, matched), ...opened];
    paragraph = lazy || (reading.kind !== "code" && PARAGRAPH_TEXT.has(reading.kind));
    if (reading.kind === "fence") fence = { ...reading, open };
    out.push(escaped(line, reading.kind) + ending);
  }
  // A fence left open is closed at its list items' column; one in a block quote ends with the quote
  // (at the blank line after the text).
  if (fence && !fence.open.some((c) => c.kind === "quote")) {
    const col = fence.open.reduce((sum, c) => sum + (c.kind === "item" ? c.width : 0), 0);
    out.push(`\n${" ".repeat(col)}${fence.marker}`);
  }
  return out.join("");
}

/**
 * The line as text, not structure, if it is a heading, a setext underline, the start of an HTML
 * block or a line some reader takes for a fence.
 */
function escaped(line: string, kind: Reading["kind"]): string {
  if (kind === "heading") return line.replace(/#{1,6}/, (hashes) => "#".repeat(Math.min(6, hashes.length + 3)));
  if (kind === "underline") return line.replace(/(=+|-+)(\s*)$/, "\\$1$2");
  if (kind === "html") return line.replace("<", "\\<");
  if (kind === "backticks") return line.replace("`", "\\`");
  return line;
}

/**
 * A block quote, or a list item whose content starts `width` columns into its container's; `empty`
 * while the item holds nothing yet (a blank line then ends it: it may begin with one at most, §5.2).
 */
type Container = { kind: "quote" } | { kind: "item"; width: number; empty: boolean };

/** A code fence the text opened: its marker and the containers it is in. */
interface Fence {
  kind: "fence";
  marker: string;
  open: Container[];
}

type Reading =
  | Omit<Fence, "open">
  | { kind: "heading" | "underline" | "html" | "backticks" | "break" | "code" | "text" | "blank" };

/** What is (once escaped) a paragraph's text, or goes on with one (indented code cannot interrupt it). */
const PARAGRAPH_TEXT = new Set<Reading["kind"]>(["text", "underline", "html", "backticks", "code"]);

/** Tabs as the spaces to the next stop of 4 (CommonMark §2.2), for reading a line's indentation. */
function detab(line: string): string {
  let out = "";
  for (const ch of line) out += ch === "\t" ? " ".repeat(4 - (out.length % 4)) : ch;
  return out;
}

const QUOTE = /^ {0,3}> ?/;
// `s`: an info string may hold any character, U+2028 and U+2029 too (JavaScript's `.` stops there,
// CommonMark does not), or a fence it opens would go unseen and unclosed.
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/s;
/**
 * A blank line, or nothing after a closing fence: spaces and tabs only (§2.1). JavaScript's `\s` and
 * trim() also take a no-break space, U+2028 and the like, which CommonMark reads as text.
 */
const BLANK = /^[ \t]*$/;

/**
 * How many of the open containers, outermost first, the line continues (a quote: its `>`; a list
 * item: its content's indentation, or a blank line), and the line past their markers.
 */
function continued(line: string, open: Container[]): { matched: number; rest: string } {
  let rest = line;
  let matched = 0;
  for (const container of open) {
    if (container.kind === "quote") {
      const quote = QUOTE.exec(rest);
      if (!quote) break;
      rest = rest.slice(quote[0].length);
    } else if (BLANK.test(rest)) {
      if (container.empty) break;
      rest = "";
    } else if (rest.startsWith(" ".repeat(container.width))) {
      rest = rest.slice(container.width);
      container.empty = false;
    } else break;
    matched += 1;
  }
  return { matched, rest };
}

/** Whether the line is the fence's closing fence (its character, at least as long, nothing after). */
function closes(rest: string, fence: Omit<Fence, "open">): boolean {
  const marker = FENCE.exec(rest);
  return (
    !!marker && marker[1][0] === fence.marker[0] && marker[1].length >= fence.marker.length && BLANK.test(marker[2])
  );
}

/**
 * An autolink (CommonMark §6.5) a line starts with: `<` and a scheme, or an address starting with a
 * letter or digit (`<!--@x>` is an address too, but its `<!--` starts an HTML block first). No tag
 * name holds a `:` or `@`, so no autolink starts an HTML block (§4.6): it stays a link.
 */
const AUTOLINK =
  /^ {0,3}<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[A-Za-z0-9][A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>/;

/**
 * What a line (tabs expanded, past the containers it continues) is once the block quote and list
 * item markers it starts with are read: a heading, a setext underline, the start of an HTML block (an
 * autolink starts none: it is no tag), a code fence, a thematic break, indented code, blank or text.
 * The containers it opens go on `opened`. With a `paragraph` open, a list item that is empty or
 * numbered other than 1 cannot interrupt it (§5.2): that line is text.
 */
function readLine(line: string, start: { opened: Container[]; paragraph: boolean }): Reading {
  const { opened } = start;
  let rest = line;
  for (;;) {
    if (BLANK.test(rest)) return { kind: "blank" };
    if (/^ {0,3}#{1,6}([ \t]|$)/.test(rest)) return { kind: "heading" };
    const marker = FENCE.exec(rest);
    // A fence CommonMark opens: a backtick fence's info string holds no backtick (§4.5). commonmark.js
    // looks for that backtick with a `.` that stops at U+2028 and U+2029, so it opens a fence when
    // one of them comes first: the line's first backtick is escaped, so no reader takes it for one.
    if (marker && !(marker[1][0] === "`" && marker[2].includes("`"))) return { kind: "fence", marker: marker[1] };
    if (marker && /^[^`]*[\u2028\u2029]/.test(marker[2])) return { kind: "backticks" };
    // A setext underline (one `-` is one too) and a line that starts an HTML block (a heading, a
    // comment that would hide the messages after it) are escaped: text, not structure.
    if (/^ {0,3}(=+|-+)\s*$/.test(rest)) return { kind: "underline" };
    if (/^ {0,3}<[A-Za-z/!?]/.test(rest) && !AUTOLINK.test(rest)) return { kind: "html" };
    // A thematic break (`- - -`, `* * *`) is no list item: nothing in it is read further.
    if (/^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/.test(rest)) return { kind: "break" };
    if (/^ {4}/.test(rest)) return { kind: "code" };
    const quote = QUOTE.exec(rest);
    // `s`: content starting with U+2028 or U+2029 is content (an item with it may interrupt a paragraph).
    const item = /^( {0,3})([-+*]|(\d{1,9})[.)])( *)(.?)/s.exec(rest);
    const interrupts = !start.paragraph || opened.length > 0 || (!!item?.[5] && (!item[3] || Number(item[3]) === 1));
    if (quote) {
      rest = rest.slice(quote[0].length);
      opened.push({ kind: "quote" });
    } else if (item && (item[4] || !item[5]) && interrupts) {
      // Content starts after 1 to 4 spaces; after 5 or more it is indented code, and after none (an
      // item starting blank) on the next line, 1 space in either way.
      const spaces = item[5] && item[4].length <= 4 ? item[4].length : 1;
      const width = item[1].length + item[2].length + spaces;
      rest = rest.slice(width);
      opened.push({ kind: "item", width, empty: !item[5] });
    } else return { kind: "text" };
  }
}

/**
 * A name or id printed inside one line (a heading, a sentence): whatever it holds stays on that
 * line, so it cannot start a heading of its own. The routes and the import check these fields;
 * this holds for whatever was stored before they did (a title with line breaks, say).
 */
function oneLine(text: string): string {
  return withoutHidden(text.replace(/\s+/g, " ")).trim();
}

/** oneLine as inline code: delimited by a backtick run longer than any inside, so none closes it. */
function code(text: string): string {
  const line = oneLine(text);
  const ticks = "`".repeat(Math.max(0, ...[...line.matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  const pad = line.startsWith("`") || line.endsWith("`") ? " " : "";
  return `${ticks}${pad}${line}${pad}${ticks}`;
}

/**
 * A name as a link's text, shown as written: on one line (oneLine), and every character that could
 * end the link or make markup inside it (a bracket, a backtick's code span, emphasis, raw HTML, an
 * entity) backslash-escaped (CommonMark §2.4: any ASCII punctuation may be).
 */
function linkText(name: string): string {
  return oneLine(name).replace(/[\\[\]`*_~<>&!]/g, "\\$&");
}

async function* asMarkdown(s: ExportSource, exportedAt: string): AsyncGenerator<string> {
  const c = s.conversation;
  yield `# ${oneLine(c.title)}\n\nConversation \`${c.id}\`, exported ${exportedAt} (${EXPORT_FORMAT_ID}).\n\n`;
  if (typeof c.summary === "string")
    yield `## Summary (messages 1–${c.summarizedThroughMessage})\n\n${inMessage(c.summary)}\n\n`;
  if (s.episodes.length) {
    yield "## Fold history\n\n";
    for (const e of s.episodes)
      yield `### Fold through message ${e.throughSeq} (${e.at})\n\n${inMessage(e.summary)}\n\n`;
  }
  let heading = false;
  for await (const card of s.cards) {
    if (!heading) yield "## Compaction cards\n\n";
    heading = true;
    yield `${fenced(JSON.stringify(card, null, 2), "json")}\n\n`;
  }
  heading = false;
  for await (const a of s.attachments) {
    if (!heading) yield "## Attachments\n\n";
    heading = true;
    yield `- [${linkText(a.name)}](${a.url}) (\`${a.id}\`, ${a.type}, ${a.size} bytes)\n`;
  }
  yield `${heading ? "\n" : ""}## Transcript\n\n`;
  for await (const m of s.messages) {
    const who = m.agent ? `${m.role}, sub-agent ${oneLine(m.agent.name)}` : m.role;
    const replaced = m.supersededBy ? ` · superseded by ${code(m.supersededBy)}` : "";
    yield `### ${m.seq} · ${who} · ${m.createdAt}${replaced}\n\n`;
    for (const b of m.content) {
      if (b.type === "text") yield `${inMessage(b.text)}\n\n`;
      else if (b.type === "tool_use")
        yield `Tool call ${code(b.name)} (${code(b.id)}):\n\n${fenced(JSON.stringify(b.input, null, 2), "json")}\n\n`;
      else if (b.type === "tool_result")
        yield `Tool result for ${code(b.tool_use_id)}${b.is_error ? " (error)" : ""}:\n\n${fenced(blockText(b))}\n\n`;
      else if (b.type === "thinking") yield b.thinking ? `Thinking:\n\n${fenced(b.thinking)}\n\n` : "";
      else if (b.type === "redacted_thinking") yield "Thinking (encrypted).\n\n";
      else if (b.type === "server_tool_use")
        yield `Server tool call ${code(b.name)} (${code(b.id)}):\n\n${fenced(JSON.stringify(b.input, null, 2), "json")}\n\n`;
      else if (b.type !== "image")
        yield `Server tool result for ${code(b.tool_use_id)} (${oneLine(b.type)}):\n\n${fenced(blockText(b))}\n\n`;
      // An image's address as inline code on one line: whatever the stored string holds (a line
      // break, a bracket) can neither start a heading nor make a link.
      else if (b.source.type === "url") yield `Image ${code(b.source.url)}\n\n`;
      else yield `${blockText(b)}\n\n`;
    }
  }
}

/** The text pieces as a byte stream (pull-based: nothing is produced faster than it is read). */
export function textStream(pieces: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await pieces.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await pieces.return(undefined);
    },
  });
}
