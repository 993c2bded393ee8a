/**
 * Thinking as the real models do it (https://platform.claude.com/docs/en/build-with-claude/thinking):
 * whether a request thinks, how its blocks are shown, how long the reasoning is, and the sealing of
 * the reply's thinking blocks onto the chain of those the request carried.
 *
 * - On: `adaptive` or `enabled`, or `thinking` omitted on a model whose default is adaptive. Off:
 *   `disabled`, `between_tools`, or a forced tool choice (the reply then starts with the call).
 * - display: the request's, else the model's default. "summarized" shows a short summary of the
 *   reasoning derived from the prompt; "omitted" shows `thinking: ""`. The full reasoning length is
 *   billed either way (usage.output_tokens and output_tokens_details.thinking_tokens).
 * - Effort scales the reasoning length: low ×0.25, medium ×0.5, high ×1, xhigh ×1.5, max ×2.
 * - Progress updates: on models with `progressInThinking` (and under `between_tools`) the note
 *   written before tool calls is a thinking block of its own, empty under "omitted", with its text
 *   under "summarized" and under `between_tools`.
 */
import type { Effort, ThinkingDisplay, ThinkingType } from "../models/catalog";
import { extendPrefix, prefixHex } from "./binding";
import { textTokens, truncateToModelTokens } from "./counting";
import { type Hash64, hashSeed } from "./hash";
import type { ModelProfile } from "./model";
import { sealThinking, textHash, thinkingIdOf } from "./thinking-seal";
import type { WireBlock } from "./wire";

export interface ThinkingMode {
  type: ThinkingType;
  /** Up-front reasoning happens. */
  on: boolean;
  display: ThinkingDisplay;
  effort: Effort | null;
  budget: number | null;
  /** The note before tool calls is a progress-update thinking block. */
  progressBlocks: boolean;
  /** Progress blocks show their text. */
  progressText: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

export function thinkingMode(body: Record<string, unknown>, model: ModelProfile): ThinkingMode {
  const config = isObject(body.thinking) ? body.thinking : null;
  const type =
    (config?.type as ThinkingType | undefined) ?? (model.thinking.whenOmitted === "adaptive" ? "adaptive" : "disabled");
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  const forced = choice === "any" || choice === "tool";
  const on = (type === "adaptive" || type === "enabled") && !forced;
  const display = (typeof config?.display === "string" ? config.display : model.thinking.display) as ThinkingDisplay;
  const setEffort = isObject(body.output_config) ? body.output_config.effort : undefined;
  const effort = (typeof setEffort === "string" ? setEffort : (model.effort?.default ?? null)) as Effort | null;
  const betweenTools = type === "between_tools";
  return {
    type,
    on,
    display,
    effort,
    budget: type === "enabled" && typeof config?.budget_tokens === "number" ? config.budget_tokens : null,
    progressBlocks: betweenTools || (on && model.thinking.progressInThinking),
    progressText: betweenTools || display === "summarized",
  };
}

const EFFORT_SCALE: Record<Effort, number> = { low: 0.25, medium: 0.5, high: 1, xhigh: 1.5, max: 2 };

/** Reasoning length in model tokens: from the prompt, scaled by effort, capped by a manual budget. */
export function reasoningTokens(seed: string, mode: ThinkingMode, summaryTokens: number): number {
  const base = 64 + (hashSeed(`reasoning:${seed}`) % 64) + Math.min(512, Math.floor(seed.length / 16));
  const scaled = Math.max(summaryTokens, 16, Math.round(base * (mode.effort ? EFFORT_SCALE[mode.effort] : 1)));
  return mode.budget !== null ? Math.min(scaled, mode.budget) : scaled;
}

/** A thinking part of a reply before sealing: its summary text and the tokens it spends. */
export interface ThinkingDraft {
  type: "thinking" | "redacted_thinking";
  summary: string;
  tokens: number;
  /** Shown text: the summary, or "" (omitted display). */
  visible: boolean;
}

/** Cuts a draft to `budget` tokens: the summary shrinks in proportion. */
export function cutDraft(draft: ThinkingDraft, budget: number, ratio: number): ThinkingDraft {
  const summaryTokens = textTokens(draft.summary, ratio);
  const keep = Math.floor((summaryTokens * budget) / Math.max(1, draft.tokens));
  return { ...draft, tokens: budget, summary: truncateToModelTokens(draft.summary, keep, ratio) };
}

export interface Chain {
  /** Prefix hash at the end of the request. */
  prefix: Hash64;
  /** Last and first kept thinking block of the request ("" when none). */
  previous: string;
  root: string;
  /** The request's effort when its thinking type is `between_tools`: each block carries it. */
  betweenToolsEffort?: string;
}

/**
 * Seals the reply's thinking drafts in place, in order, chaining each onto the one before it and
 * binding it to the prefix before it (the request, then the reply's earlier blocks).
 */
export function sealReply(content: (WireBlock | ThinkingDraft)[], chain: Chain, model: ModelProfile): WireBlock[] {
  const count = content.filter(isDraft).length;
  // The reply is named by what it answers, not by the request's bytes, so a signature does not
  // change with `display` or `stream` (the docs: identical whichever display value is set).
  const replyId = `${prefixHex(chain.prefix)}${chain.previous}`;
  let state = chain.prefix;
  let { previous, root } = chain;
  let index = 0;
  return content.map((part) => {
    if (!isDraft(part)) {
      state = extendPrefix(state, "assistant", part);
      return part;
    }
    const value = sealThinking({
      k: part.type === "thinking" ? "t" : "r",
      m: model.bindingKey,
      b: model.thinking.prefixBound ? 1 : 0,
      h: part.type === "thinking" ? textHash(part.summary) : "",
      n: part.tokens,
      p: prefixHex(state),
      q: previous,
      r: root,
      i: replyId,
      x: index++,
      c: count,
      ...(chain.betweenToolsEffort ? { e: chain.betweenToolsEffort } : {}),
    });
    const id = thinkingIdOf(value);
    previous = id;
    if (root === "") root = id;
    return part.type === "thinking"
      ? { type: "thinking", thinking: part.visible ? part.summary : "", signature: value }
      : { type: "redacted_thinking", data: value };
  });
}

export function isDraft(part: WireBlock | ThinkingDraft): part is ThinkingDraft {
  return "tokens" in part && "summary" in part;
}

/** The progress update written when a reply stops right after a tool call or result (docs: thinking, progress updates). */
export const INTERRUPTED = "This part of the response was interrupted before it finished.";
