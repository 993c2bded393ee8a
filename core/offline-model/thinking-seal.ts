/**
 * What a thinking block's signature (or a redacted_thinking block's `data`) carries, sealed by
 * signing.ts: who produced it, a hash of its text, how long the reasoning was, and what it is bound
 * to (the prefix hash, the thinking block before it and the first one before it, the reply it came
 * from and its place there). The signature does not depend on `display`, as the docs say
 * (https://platform.claude.com/docs/en/build-with-claude/thinking: "The signature field is identical
 * whichever display value you set").
 */
import { hashHex, hashString } from "./hash";
import type { ModelProfile } from "./model";
import { open, seal, sealId } from "./signing";
import type { WireBlock } from "./wire";

export interface ThinkingSeal {
  /** "t" thinking, "r" redacted_thinking. */
  k: "t" | "r";
  /** The producing model (test models sign as the model they imitate). */
  m: string;
  /** 1 when produced by a model that binds blocks to their prefix. */
  b: 0 | 1;
  /** Hash of the block's text as produced (its summary; "" for redacted). */
  h: string;
  /** Reasoning tokens: billed as output when produced, counted as input when sent back. */
  n: number;
  /** Prefix hash before the block (binding.ts). */
  p: string;
  /** Id of the thinking block just before it in the request it answered, "" when none. */
  q: string;
  /** Id of the first thinking block before it, "" when none. */
  r: string;
  /** The reply it belongs to, its index among that reply's thinking blocks, and their count. */
  i: string;
  x: number;
  c: number;
  /** The effort it was produced at under thinking type `between_tools` (absent otherwise). */
  e?: string;
}

const PURPOSE = "thinking";

export const sealThinking = (payload: ThinkingSeal): string => seal(PURPOSE, payload);

/** The seal of a thinking / redacted_thinking block, or null when its signature or data is not valid. */
export function openThinking(block: WireBlock): ThinkingSeal | null {
  const value = block.type === "thinking" ? block.signature : block.data;
  const payload = open<ThinkingSeal>(PURPOSE, value);
  if (!payload || payload.k !== (block.type === "thinking" ? "t" : "r")) return null;
  return payload;
}

/** A block's id in the chain: the MAC of its signature or data. */
export const thinkingId = (block: WireBlock): string =>
  sealId(String(block.type === "thinking" ? block.signature : block.data));
export const thinkingIdOf = (value: string): string => sealId(value);

export const textHash = (text: string): string => hashHex(hashString(`thinking-text:${text}`));

/**
 * Claude Sonnet 5.5 reads thinking blocks of Sonnet 5, Opus 4.8, Haiku 4.5 and earlier models, and
 * no Opus 5 / Opus 5.5 / Fable / Mythos block (https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5).
 * The stand-in keeps the rest simple: every other model reads only its own blocks.
 */
const SONNET_55_READS = new Set([
  "claude-sonnet-5",
  "claude-opus-4-8",
  "claude-opus-4-7",
  "claude-opus-4-6",
  "claude-sonnet-4-6",
  "claude-haiku-4-5",
  "claude-opus-4-5",
]);

/** Whether `reader` reads a block `producer` made; an unreadable block is dropped silently. */
export function canRead(reader: ModelProfile, producer: string): boolean {
  if (producer === reader.bindingKey) return true;
  return reader.bindingKey === "claude-sonnet-5-5" && SONNET_55_READS.has(producer);
}
