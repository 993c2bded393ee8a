// Text the Messages API refuses: "text content blocks must contain non-whitespace text" (400, and
// stored, on every later request of the conversation). Every entrance that stores text the model
// will read checks it with isBlankText; a tool's blank output is rewritten instead (the tool, not
// the caller, produced it).
import { z } from "zod";
import type { ImageBlock, TextBlock } from "./types";

export const BLANK_TEXT_MESSAGE = "must contain non-whitespace text";

/** What replaces a tool result whose content is only whitespace. */
export const EMPTY_RESULT = "(the tool returned no text)";

// The API's notion of whitespace is not documented. This is the union of JavaScript's (trim, \s)
// and Python's / Rust's (which add the C0 separators U+001C-U+001F and NEL U+0085), so text this
// accepts is non-blank whichever one the API uses.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the information separators U+001C-001F are what this test of blankness must match
const BLANK = /^[\s\x1c-\x1f\x85]*$/u;

/** True for "" and for text made only of whitespace. */
export const isBlankText = (text: string): boolean => BLANK.test(text);

/**
 * A string of at most `max` chars that is not blank: the entrances' text field. `trim` stores it
 * trimmed (notes, prompts); a turn's text is stored exactly as sent.
 */
export const nonBlankText = (max: number, opts: { trim?: boolean } = {}) =>
  (opts.trim ? z.string().trim() : z.string()).max(max).refine((s) => !isBlankText(s), BLANK_TEXT_MESSAGE);

type ToolContent = string | Array<TextBlock | ImageBlock>;

/**
 * A tool's output as a tool_result may carry it: blank text blocks left out, and nothing readable
 * left (blank text, or no blocks) becomes EMPTY_RESULT, the same words replay uses for results
 * stored before this rule. The same value when nothing changes.
 */
export function readableToolContent(content: ToolContent): ToolContent {
  if (typeof content === "string") return isBlankText(content) ? EMPTY_RESULT : content;
  const kept = content.filter((b) => b.type !== "text" || !isBlankText(b.text));
  if (!kept.length) return EMPTY_RESULT;
  return kept.length === content.length ? content : kept;
}
