/**
 * Deterministic reply text. Replies quote or derive from the user's words so
 * that history search, summaries and context trimming have real, distinct
 * content to work on, and the same input always yields the same text.
 */
import { hashSeed, prng } from "./hash";
import { toolResultText, type WireBlock } from "./wire";

const QUOTE_CHARS = 120;
/** Upper bound for @reply-chars so one message cannot make the isolate build gigabytes of text. */
export const MAX_REPLY_CHARS = 500_000;

/** One line that quotes the start of the user's text, so searching for their words finds the reply too. */
export function quoteReply(userText: string): string {
  const flat = userText.replace(/\s+/g, " ").trim();
  const chars = Array.from(flat); // code points, so an emoji is never cut in half
  const quoted = chars.slice(0, QUOTE_CHARS).join("");
  return `Noted: "${quoted}${chars.length > QUOTE_CHARS ? "…" : ""}"`;
}

// Plain ASCII words: one char per code unit, so lengths are exact.
const WORDS = (
  "context window token budget summary history message turn reply archive search index cache prefix " +
  "model agent tool result request response stream chunk delta event record ledger session thread " +
  "project scope detail outline review draft note memory signal pattern measure limit margin " +
  "careful quick steady bright quiet simple clear early late narrow broad modest ample precise " +
  "builds keeps moves reads writes trims folds checks counts tracks holds shares marks joins " +
  "river mountain harbor garden lantern meadow window bridge market orchard valley compass ribbon " +
  "winter autumn spring summer morning evening island forest canyon desert glacier prairie " +
  "because while after before although unless since whenever therefore meanwhile instead also"
).split(" ");

/**
 * Prose of exactly `chars` characters (well inside the ±1% contract), seeded
 * by the user's text so different turns produce different, varied text made
 * of sentences and paragraphs.
 */
export function prose(chars: number, seedText: string): string {
  const target = Math.max(0, Math.min(Math.floor(chars), MAX_REPLY_CHARS));
  if (target === 0) return "";
  const random = prng(hashSeed(seedText));
  const pick = (): string => WORDS[Math.floor(random() * WORDS.length)];
  const parts: string[] = [];
  let length = 0;
  while (length <= target) {
    const sentencesInParagraph = 3 + Math.floor(random() * 4);
    for (let s = 0; s < sentencesInParagraph && length <= target; s++) {
      const wordCount = 6 + Math.floor(random() * 11);
      const words = Array.from({ length: wordCount }, pick);
      words[0] = words[0][0].toUpperCase() + words[0].slice(1);
      const sentence = `${(s === 0 ? "" : " ") + words.join(" ")}.`;
      parts.push(sentence);
      length += sentence.length;
    }
    if (length <= target) {
      parts.push("\n\n");
      length += 2;
    }
  }
  let text = parts.join("").slice(0, target);
  // Prefer ending on a whole word when that stays inside the 1% tolerance.
  const lastSpace = text.search(/\s\S*$/);
  if (lastSpace > 0 && target - lastSpace <= Math.floor(target * 0.01)) text = `${text.slice(0, lastSpace)}.`;
  // End on punctuation rather than a dangling space or paragraph break.
  if (/\s$/.test(text)) text = `${text.slice(0, -1)}.`;
  return text;
}

/** Report on the tool results that just came back, e.g. `Read 2 tool results (25,012 and 25,012 chars).` */
export function toolResultsReply(results: readonly WireBlock[]): string {
  const sizes = results.map((block) => `${groupDigits(toolResultText(block).length)}`);
  const noun = results.length === 1 ? "tool result" : "tool results";
  const errors = results.filter((block) => block.is_error === true).length;
  const errorNote = errors === 0 ? "" : ` ${errors} of them ${errors === 1 ? "was an error" : "were errors"}.`;
  return `Read ${results.length} ${noun} (${joinList(sizes)} chars).${errorNote}`;
}

/** 25012 → "25,012" without Intl, so output does not depend on the runtime's locale data. */
export function groupDigits(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function joinList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
