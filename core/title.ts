// Automatic titles: after a conversation's first exchange the server asks the conversation's model
// for a short title (one small call, off the turn's path: durable-objects/conversation/auto-title.ts).
// This file is the request and the clean-up of the answer, shared by nothing else.
import type { ModelEntry } from "./models/catalog";
import { summarizationParams } from "./model-params";
import { isAttachmentNote, isToolResultCarrier, renderMessageText } from "./render";
import { sliceWhole } from "./text-cut";
import { VISIBLE, withoutHidden } from "./visible-text";
import type { ModelRequest, StoredMessage } from "./types";

/** The title every conversation created without one gets: it counts as "no title". */
export const DEFAULT_TITLE = "New conversation";
/** A stored title is at most this long (the same bound as POST / PATCH `title`). */
export const TITLE_MAX_CHARS = 200;
/** The title call's text budget: a title is a handful of words. */
export const TITLE_MAX_TOKENS = 40;
/** How much of the first prompt and the first reply the call carries. */
const EXCERPT_CHARS = 2_000;

export const TITLE_SYSTEM_PROMPT = [
  "Write a short title for this conversation, from its first exchange.",
  "At most 6 words, in the language of the user's message; no quotes, no trailing punctuation, no preamble.",
  "Answer with the title only.",
].join("\n");

/** An import's title when it is given none: it counts as "no title" too (its first turn titles it). */
export const IMPORTED_TITLE = "Imported conversation";

/** Whether a title is none at all: blank, or a default the server gave (never one the caller chose). */
export const untitled = (title: string) => title.trim() === "" || title === DEFAULT_TITLE || title === IMPORTED_TITLE;

/**
 * A user message's own words: its text without the attachments' notes riding in it (a file named
 * with the prompt, or one uploaded before it), which the platform wrote, not the person.
 */
const ownWords = (m: StoredMessage): string =>
  renderMessageText({ content: m.content.filter((b) => !isAttachmentNote({ role: "user", content: [b] })) }).trim();

/**
 * The first exchange: the first user message with words of its own (not a note of a file uploaded
 * before it, nor a carrier of tool results) and the first assistant text after it; null until both exist.
 */
export function firstExchange(messages: readonly StoredMessage[]): { prompt: string; reply: string } | null {
  const at = messages.findIndex((m) => m.role === "user" && !isToolResultCarrier(m) && ownWords(m) !== "");
  if (at < 0) return null;
  const answer = messages
    .slice(at + 1)
    .find((m) => m.role === "assistant" && m.content.some((b) => b.type === "text" && b.text.trim() !== ""));
  if (!answer) return null;
  const replyText = answer.content
    .map((b) => (b.type === "text" ? b.text : ""))
    .join("")
    .trim();
  return { prompt: ownWords(messages[at]), reply: replyText };
}

/** An excerpt cut whole: half a surrogate pair is a 400 on the title call, which is tried only once. */
const cut = (text: string) => (text.length > EXCERPT_CHARS ? `${sliceWhole(text, 0, EXCERPT_CHARS)}…` : text);

/** The one model call: no tools, the least thinking the model allows, a few tokens of text. */
export function buildTitleRequest(model: ModelEntry, exchange: { prompt: string; reply: string }): ModelRequest {
  return {
    model: model.id,
    ...summarizationParams(model, TITLE_MAX_TOKENS),
    system: [{ type: "text", text: TITLE_SYSTEM_PROMPT }],
    tools: [],
    messages: [
      {
        role: "user",
        content: [
          {
            type: "text",
            text: `<first_message>\n${cut(exchange.prompt)}\n</first_message>\n<first_reply>\n${cut(exchange.reply)}\n</first_reply>\n\nWrite the title now.`,
          },
        ],
      },
    ],
  };
}

/**
 * The model's answer as a title: its first non-empty line, without wrapping quotes, a "Title:"
 * label or trailing punctuation, whitespace collapsed, within TITLE_MAX_CHARS; null when nothing is left.
 */
export function cleanTitle(answer: string): string | null {
  let line =
    answer
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l !== "") ?? "";
  line = line
    .replace(/^(?:#+\s*)?(?:title\s*:\s*)/i, "")
    .replace(/\s+/g, " ")
    .trim();
  line = line.replace(/^["'“”‘’*_`]+|["'“”‘’*_`]+$/g, "").trim();
  line = line.replace(/[.:;,!\s]+$/, "").trim();
  // Cut between characters (a pair split at the cut would be a title no client could send back),
  // and well-formed whatever the model wrote.
  line = withoutHidden(line.toWellFormed()).replace(/\s+/g, " ");
  if (line.length > TITLE_MAX_CHARS) line = sliceWhole(line, 0, TITLE_MAX_CHARS).replace(/\s+\S*$/, "");
  // What a title PATCH or POST would refuse is never stored either: a title with nothing to see is none.
  line = line.trim();
  return line === "" || !VISIBLE.test(line) || untitled(line) ? null : line;
}
