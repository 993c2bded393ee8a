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
 * are escaped, and a code fence it leaves open is closed at its end (it would swallow the messages
 * after it).
 */
function inMessage(text: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const marker = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && !marker[2].trim()) fence = null;
      out.push(line);
    } else if (marker && !(marker[1][0] === "`" && marker[2].includes("`"))) {
      // A fence CommonMark opens: a backtick fence's info string holds no backtick (§4.5).
      fence = marker[1];
      out.push(line);
    } else if (/^ {0,3}#{1,6}(\s|$)/.test(line))
      out.push(
        line.replace(
          /^( {0,3})(#{1,6})/,
          (_, space: string, hashes: string) => space + "#".repeat(Math.min(6, hashes.length + 3)),
        ),
      );
    // A setext underline (one `-` is one too) and a line that starts an HTML block (a heading, a
    // comment that would hide the messages after it) are escaped: text, not structure.
    else if (/^ {0,3}(=+|-+)\s*$/.test(line)) out.push(`\\${line.trimStart()}`);
    else out.push(/^ {0,3}<[A-Za-z/!?]/.test(line) ? line.replace("<", "\\<") : line);
  }
  if (fence) out.push(fence);
  return out.join("\n");
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
    yield `- [${a.name.replace(/[[\]\\]/g, "\\$&")}](${a.url}) (\`${a.id}\`, ${a.type}, ${a.size} bytes)\n`;
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
