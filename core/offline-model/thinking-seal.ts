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

/** Opus, Sonnet and Haiku models released before Claude Opus 5.5 (core/offline-model/model-dates.ts). */
const OPUS_SONNET_HAIKU_BEFORE_OPUS_55 = [
  "claude-opus-5",
  "claude-sonnet-5",
  "claude-opus-4-8",
  "claude-opus-4-7",
  "claude-opus-4-6",
  "claude-sonnet-4-6",
  "claude-opus-4-5",
  "claude-haiku-4-5",
];

/** Every catalog model released before Claude Fable 5.1 (2026-09-01). */
const BEFORE_FABLE_51 = [
  ...OPUS_SONNET_HAIKU_BEFORE_OPUS_55,
  "claude-fable-5",
  "claude-mythos-5",
  "claude-mythos-preview",
];

/**
 * Fable 5.1 and Mythos 5.1 read each other's blocks, those of earlier models and, on the Claude API,
 * Opus 5.5's: https://platform.claude.com/docs/en/build-with-claude/preserved-thinking#switching-models ("Claude Fable 5.1 and
 * Claude Mythos 5.1 read thinking blocks produced by each other and by earlier Claude models"; "On the
 * Claude API, Claude Fable 5.1 and Claude Mythos 5.1 read thinking blocks from Claude Opus 5.5; no
 * other model does"), https://platform.claude.com/docs/en/models/fable-5-1/migration-guide ("Claude Fable 5.1 reads blocks from
 * Claude Opus 5, Claude Fable 5, Claude Mythos 5, and earlier models"). Sonnet 5.5 blocks are not
 * among them: only Opus 5.5 reads those (the Sonnet 5.5 entry's source).
 */
const FABLE_51_FAMILY_READS = ["claude-fable-5-1", "claude-mythos-5-1", "claude-opus-5-5", ...BEFORE_FABLE_51];

/**
 * Reader (bindingKey: the catalog id, which a dated alias or a test model resolves to) → the
 * producers whose blocks it reads besides its own, on the Claude API. A block the reader cannot read
 * is dropped silently. A model missing here reads only its own blocks: the docs name no other
 * producer for it (Claude Fable 5.2: its page states only who reads Fable 5.2 blocks; Claude Haiku
 * 5.5: its page states no read list; the models before Claude Fable 5.1, where the model check starts).
 */
const READERS: Record<string, readonly string[]> = {
  // https://platform.claude.com/docs/en/models/fable-5-2/whats-new-fable-5-2: "Only Claude Fable 5.2 and Claude Mythos 5.2 read
  // Claude Fable 5.2 thinking blocks."
  "claude-mythos-5-2": ["claude-fable-5-2"],
  "claude-fable-5-1": FABLE_51_FAMILY_READS,
  "claude-mythos-5-1": FABLE_51_FAMILY_READS,
  // https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5#thinking-blocks-are-tied-to-the-model-that-produced-them:
  // "Claude Opus 5.5 reads thinking blocks from Claude Opus 5, from earlier Opus, Sonnet, and Haiku
  // models, and, on the Claude API and Google Cloud, from Claude Sonnet 5.5, but not from Claude Fable
  // or Claude Mythos models." (also https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5: "On the Claude API
  // and Google Cloud, Claude Opus 5.5 reads Claude Sonnet 5.5 thinking blocks; no other model does.")
  "claude-opus-5-5": [...OPUS_SONNET_HAIKU_BEFORE_OPUS_55, "claude-sonnet-5-5"],
  // https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5#thinking-blocks-are-tied-to-the-model-that-produced-them:
  // "Claude Sonnet 5.5 reads thinking blocks from Claude Sonnet 5, Claude Opus 4.8, Claude Haiku 4.5,
  // and earlier models, but not from Claude Opus 5, Claude Opus 5.5, or any Claude Fable or Claude
  // Mythos model."
  "claude-sonnet-5-5": [
    "claude-sonnet-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
    "claude-opus-4-5",
  ],
};

/** Whether `reader` reads a block `producer` made; an unreadable block is dropped silently. */
export function canRead(reader: ModelProfile, producer: string): boolean {
  if (producer === reader.bindingKey) return true;
  return READERS[reader.bindingKey]?.includes(producer) ?? false;
}
