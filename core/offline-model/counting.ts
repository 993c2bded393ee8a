/**
 * Token counts as the requested model makes them: the cl100k count of core/tokens.ts (a stated
 * stand-in for Claude's unpublished tokenizer) times the model's `tokenizerRatio`, rounded up per
 * block. Thinking blocks sent back count the reasoning they carry (read from their signature), not
 * the visible summary, as the real API bills the full thinking as input.
 */
import { countBlockTokens, countTokens, countToolTokens, MESSAGE_OVERHEAD_TOKENS, truncateToTokens } from "../tokens";
import { wholeAt } from "../text-cut";
import type { WireBlock } from "./wire";

export interface Counter {
  ratio: number;
  /** Model tokens of a thinking / redacted_thinking block, when its signature says. */
  thinking?: (block: WireBlock) => number | undefined;
}

/** ⌈tokens × ratio⌉ computed on integers, so 100 × 1.3 is exactly 130. */
export function scale(tokens: number, ratio: number): number {
  const permille = Math.round(ratio * 1000);
  return permille === 1000 ? tokens : Math.ceil((tokens * permille) / 1000);
}

export const textTokens = (text: string, ratio: number): number => scale(countTokens(text), ratio);

/** The longest prefix of `text` within `max` model tokens. */
export function truncateToModelTokens(text: string, max: number, ratio: number): string {
  const permille = Math.round(ratio * 1000);
  let cut = truncateToTokens(text, Math.floor((max * 1000) / permille));
  // Shaved a whole character at a time, never half a surrogate pair.
  while (cut.length > 0 && textTokens(cut, ratio) > max) cut = cut.slice(0, wholeAt(cut, cut.length - 1));
  return cut;
}

export function blockTokens(block: WireBlock, counter: Counter): number {
  if (block.type === "thinking" || block.type === "redacted_thinking") {
    const carried = counter.thinking?.(block);
    if (carried !== undefined) return carried;
  }
  return scale(countBlockTokens(block), counter.ratio);
}

export const toolTokens = (tool: object, counter: Counter): number => scale(countToolTokens(tool), counter.ratio);
export const overheadTokens = (counter: Counter): number => scale(MESSAGE_OVERHEAD_TOKENS, counter.ratio);
