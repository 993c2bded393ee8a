// The Messages API's rules for what a replayed history may carry, applied to the stored messages
// before they become a request. Nothing stored changes: each rule picks or reshapes copies.
//
// Rules relied on (Anthropic's docs; docs/model.md "Rules the requests keep" lists them all):
// - Thinking goes back only while nothing before it moved: core/thinking-guard.ts, the request's
//   last pass (core/replay.ts).
// - A refused turn is left out whole: "you must reset the conversation context before continuing"
//   (test-and-evaluate/strengthen-guardrails/handle-streaming-refusals); its partial output is
//   discarded (build-with-claude/refusals-and-fallback). The record keeps it.
// - Text blocks must contain non-whitespace text (api/errors; a 400 on every later request
//   otherwise): whitespace-only text stored before this rule existed is dropped at replay.
// - Sealed content goes back only as the API issued it: an altered or foreign thinking signature,
//   search result `encrypted_content` or citation `encrypted_index` is a 400 on every later request
//   (build-with-claude/extended-thinking, tool-use/web-search-tool). An imported transcript's
//   cannot be told from a forged one, so an imported message goes back as its words only; the
//   record keeps every byte.
import { EMPTY_RESULT, isBlankText } from "./blank-text";
import { isAttachmentNote } from "./render";
import {
  isServerToolResult,
  isThinkingBlock,
  type ContentBlock,
  type StoredMessage,
  type ToolResultBlock,
} from "./types";

/**
 * A user message a person (or an automation) wrote: one holding no tool result, nor an
 * attachment's note (one uploaded during a client-tool pause is saved inside the turn, after the
 * step's results: it starts no turn). A message that answers a step's calls and asks on (results,
 * then text: an imported transcript's) continues that step: a turn cut before it (a refused one
 * left out) would take the results from their calls.
 */
export const isPrompt = (m: Pick<StoredMessage, "role" | "content">): boolean =>
  m.role === "user" && !m.content.some((b) => b.type === "tool_result") && !isAttachmentNote(m);

export { EMPTY_RESULT };

const blank = isBlankText;

/**
 * The stored history as a request may carry it: refused turns left out, whitespace-only text
 * removed, imported messages (seq up to `importedThrough`) without their sealed blocks. Messages
 * left with no content are dropped.
 */
export function replayableHistory(
  history: readonly StoredMessage[],
  importedThrough = 0,
  between = false,
): StoredMessage[] {
  const kept = withoutRefusedTurns(history, between);
  const out: StoredMessage[] = [];
  kept.forEach((m) => {
    const imported = m.seq <= importedThrough ? withoutSeals(m.content) : m.content;
    const content = cleanContent(m.role === "assistant" ? withoutAssistantImages(imported) : imported);
    if (content === m.content) out.push(m);
    else if (content.length) out.push({ ...m, content });
  });
  return out;
}

/**
 * Leaves out each refusal: the refused reply always; its whole turn (prompt to refusal) once a later
 * prompt follows, unless a fallback model answered after it within the same turn. An attachment note
 * inside that turn stays: its file still exists, and the note is the model's only pointer to it.
 */
export function withoutRefusedTurns(history: readonly StoredMessage[], between: boolean): readonly StoredMessage[] {
  const drop = refusedTurns(history, between);
  return drop.size ? history.filter((_, i) => !drop.has(i)) : history;
}

/** The indexes of the messages withoutRefusedTurns leaves out (what stubbing must not count either). */
export function refusedTurns(history: readonly StoredMessage[], between = false): ReadonlySet<number> {
  const drop = new Set<number>();
  if (!history.some((m) => m.stopReason === "refusal")) return drop;
  let turnStart = 0;
  for (let i = 0; i < history.length; i++) {
    if (startsTurn(history, i)) turnStart = i;
    if (history[i].stopReason !== "refusal") continue;
    let end = i + 1;
    while (end < history.length && !startsTurn(history, end)) end++;
    const answeredAfter = history.slice(i + 1, end).some((m) => m.role === "assistant" && m.stopReason !== "refusal");
    // The turn still running (no prompt after it) is being asked of a fallback model: its prompt
    // stays. Between turns (`between`: the /replay view) the next turn's prompt will follow it.
    if (answeredAfter || (end === history.length && !between)) drop.add(i);
    else for (let j = turnStart; j < end; j++) if (j === turnStart || !isAttachmentNote(history[j])) drop.add(j);
  }
  return drop;
}

/**
 * Whether history[i] opens a turn: a prompt, or a message shaped like an attachment's note that was
 * sent as the prompt (notes are told by their text, which a person can type). A note an upload
 * saved either sits after a step's results (a paused turn) or is followed by the prompt it rides
 * with; one with no results before it and the model's reply right after it was the turn's prompt.
 */
export function startsTurn(history: readonly StoredMessage[], i: number): boolean {
  const m = history[i];
  if (isPrompt(m)) return true;
  return isAttachmentNote(m) && history[i - 1]?.role !== "user" && history[i + 1]?.role === "assistant";
}

/**
 * An imported message's content without what the API sealed for whoever ran it: thinking, server
 * tool calls and their results, and text's citations (a web search citation's `encrypted_index`).
 * The same array when there is none.
 */
export function withoutSeals(content: readonly ContentBlock[]): readonly ContentBlock[] {
  const sealed = (b: ContentBlock) =>
    isThinkingBlock(b) || b.type === "server_tool_use" || isServerToolResult(b) || (b.type === "text" && !!b.citations);
  if (!content.some(sealed)) return content;
  const out: ContentBlock[] = [];
  for (const b of content) {
    if (b.type === "text") out.push(b.citations ? { type: "text", text: b.text } : b);
    else if (!sealed(b)) out.push(b);
  }
  return out;
}

/**
 * An assistant message's content with each top-level image block as a text placeholder: the API
 * refuses an image in an assistant turn, and an import took one before 2026-12-06 (it refuses them
 * now). The same array when there is none.
 */
function withoutAssistantImages(content: readonly ContentBlock[]): readonly ContentBlock[] {
  if (!content.some((b) => b.type === "image")) return content;
  return content.map((b): ContentBlock => (b.type === "image" ? { type: "text", text: "[image]" } : b));
}

/** The blocks a request may carry; the same array when nothing changes. */
function cleanContent(content: readonly ContentBlock[]): ContentBlock[] {
  let changed = false;
  const out: ContentBlock[] = [];
  for (const b of content) {
    if (b.type === "text" && blank(b.text)) {
      changed = true;
      continue;
    }
    if (b.type === "tool_result") {
      const result = cleanResult(b);
      if (result !== b) changed = true;
      out.push(result);
      continue;
    }
    out.push(b);
  }
  return changed ? out : (content as ContentBlock[]);
}

function cleanResult(b: ToolResultBlock): ToolResultBlock {
  if (typeof b.content === "string") return blank(b.content) ? { ...b, content: EMPTY_RESULT } : b;
  const inner = b.content.filter((x) => x.type !== "text" || !blank(x.text));
  if (inner.length === b.content.length) return b;
  return { ...b, content: inner.length ? inner : EMPTY_RESULT };
}

/** Stop reasons that cut a reply short: the next call continues it. */
export const CUT_OFF_STOPS: ReadonlySet<string> = new Set(["max_tokens", "model_context_window_exceeded", "error"]);

/**
 * The user message that continues a cut-off reply. Current models refuse a final assistant message
 * (prefill): "move [continuations] to the user message" (models/sonnet-5-5/migration-guide). Fixed
 * text, so a replay that carries it stays byte-stable.
 */
export const CONTINUE_PROMPT =
  "Your previous reply was cut off before it finished. Please continue from where you left off, without repeating what you already wrote.";

/**
 * Where a continuation prompt goes: after each cut-off assistant message that a further assistant
 * message continues, and after a cut-off last message (the continuation call itself).
 */
export function needsContinuePrompt(current: StoredMessage, next: StoredMessage | undefined): boolean {
  if (current.role !== "assistant" || !CUT_OFF_STOPS.has(current.stopReason ?? "")) return false;
  if (current.content.some((b) => b.type === "tool_use")) return false;
  return next === undefined || next.role === "assistant";
}
