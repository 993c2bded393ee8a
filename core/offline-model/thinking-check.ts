/**
 * Checks the thinking and redacted_thinking blocks a request sends back, as the docs describe
 * (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking,
 * https://platform.claude.com/docs/en/api/errors):
 *
 * - a signature (or data) that was edited, cut or emptied: 400 ``Invalid `signature` in `thinking` block``;
 * - a block of another model the requested one cannot read: dropped silently, not counted;
 * - in the latest assistant turn, a block whose text changed, or blocks of one reply reordered or
 *   partly removed: 400 "… cannot be modified" (an empty text is the omitted form and is accepted);
 * - on prefix-bound models, a block whose prefix changed since it was produced, or whose thinking
 *   predecessors are not a suffix of those it was produced after: 400 "… bound to a different
 *   conversation". So removing blocks from the start, from the end, or all of them is valid; a gap
 *   (one removed from the middle, later ones kept) invalidates the later ones, and re-inserting a
 *   removed block invalidates those produced while it was gone.
 *
 * The suffix test uses the chain each seal carries: the blocks before B must link one to the next
 * (each one's `q` is the id of the one before it), end at B's `q`, and not reach past B's `r`, the
 * first block B was produced after.
 */
import { walkPrefix } from "./binding";
import { invalid } from "./errors";
import type { ModelProfile } from "./model";
import { eachBlock, mergedTurns } from "./rules/context";
import { canRead, openThinking, textHash, thinkingId, type ThinkingSeal } from "./thinking-seal";
import type { WireBlock, WireRequest } from "./wire";
import { effectiveEffort } from "./rules/request";

export interface ThinkingCheck {
  /** Blocks dropped silently ("i.j", as sent). */
  dropped: Set<string>;
  /** Reasoning tokens each kept block carries (counted as input). */
  tokens: Map<WireBlock, number>;
  /** Where a reply to this request chains on: the last and the first thinking block sent (read or not). */
  previous: string;
  root: string;
}

const BETA_HEADER = "thinking-binding-controls-2026-08-01";

export function checkThinking(request: WireRequest, model: ModelProfile, betas: readonly string[] = []): ThinkingCheck {
  type Entry = { key: string; i: number; j: number; block: WireBlock; seal: ThinkingSeal; id: string };
  const kept: Entry[] = [];
  // Every block as sent, those the model cannot read included: the chain is of what the client sent
  // ("If the prefix differs from what you sent when the block was produced", preserved-thinking), so a
  // block produced while an unreadable one was dropped still follows it when a model that reads both
  // gets the history (A, then B, then A again).
  const sent: Entry[] = [];
  const dropped = new Set<string>();
  for (const at of eachBlock(request)) {
    if (at.block.type !== "thinking" && at.block.type !== "redacted_thinking") continue;
    const seal = openThinking(at.block);
    if (!seal)
      throw invalid(
        at.block.type === "thinking"
          ? `${at.path}: Invalid \`signature\` in \`thinking\` block`
          : `${at.path}: Invalid \`data\` in \`redacted_thinking\` block`,
      );
    const key = `${at.i}.${at.j}`;
    const entry = { key, i: at.i, j: at.j, block: at.block, seal, id: thinkingId(at.block) };
    sent.push(entry);
    if (!canRead(model, seal.m)) dropped.add(key);
    else kept.push(entry);
  }

  checkLatestTurn(request, kept);
  checkBetweenToolsEffort(request, { model, kept });

  if (model.thinking.prefixBound) {
    const walk = walkPrefix(request, (i, j) => dropped.has(`${i}.${j}`));
    const beta = betas.includes(BETA_HEADER)
      ? ""
      : ` That setting requires the \`${BETA_HEADER}\` value in the \`anthropic-beta\` header.`;
    const chain = sentChain(sent);
    for (const [n, entry] of sent.entries()) {
      if (dropped.has(entry.key) || entry.seal.b !== 1) continue;
      if (walk.before.get(entry.key) !== entry.seal.p || !chainHolds(chain, { n, seal: entry.seal })) {
        throw invalid(
          `messages.${entry.i}.content.${entry.j}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".${beta}`,
        );
      }
    }
  }
  return {
    dropped,
    tokens: new Map(kept.map((entry) => [entry.block, entry.seal.n])),
    previous: sent[sent.length - 1]?.id ?? "",
    root: sent[0]?.id ?? "",
  };
}

/**
 * What chainHolds asks of every prefix of the blocks sent, found in one pass: whether the first n
 * link one to the next (`linked[n]`), and where each id first appears. Walking each block's prefix
 * again was quadratic in the number of thinking blocks (8,000 of them: 2.8 s).
 */
interface SentChain {
  ids: string[];
  linked: boolean[];
  firstAt: Map<string, number>;
}

function sentChain(sent: readonly { id: string; seal: ThinkingSeal }[]): SentChain {
  const linked = [true];
  const firstAt = new Map<string, number>();
  for (const [k, entry] of sent.entries()) {
    linked.push(linked[k] && (k === 0 || entry.seal.q === sent[k - 1].id));
    if (!firstAt.has(entry.id)) firstAt.set(entry.id, k);
  }
  return { ids: sent.map((entry) => entry.id), linked, firstAt };
}

/** The n blocks sent before B are a suffix of those B was produced after. */
function chainHolds(chain: SentChain, { n, seal }: { n: number; seal: ThinkingSeal }): boolean {
  if (seal.q === "") return n === 0;
  if (n === 0) return true; // every earlier block removed from the start
  if (chain.ids[n - 1] !== seal.q) return false;
  if (!chain.linked[n]) return false;
  // B's root, the first block it was produced after, is first among those before it or not there.
  const rootAt = chain.firstAt.get(seal.r);
  return rootAt === undefined || rootAt === 0 || rootAt >= n;
}

/** Thinking in the latest assistant turn stays exactly as produced: same text, same order, none of a reply's blocks missing. */
function checkLatestTurn(
  request: WireRequest,
  kept: { i: number; j: number; block: WireBlock; seal: ThinkingSeal }[],
): void {
  const turns = mergedTurns(request);
  const latest = [...turns].reverse().find((turn) => turn.role === "assistant");
  if (!latest) return;
  const inLatest = new Set(latest.blocks.map((at) => `${at.i}.${at.j}`));
  const entries = kept.filter((entry) => inLatest.has(`${entry.i}.${entry.j}`));
  const modified = (entry: (typeof entries)[number]) =>
    invalid(
      `messages.${entry.i}.content.${entry.j}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`,
    );
  for (const entry of entries) {
    const text = entry.block.type === "thinking" ? String(entry.block.thinking ?? "") : "";
    if (text !== "" && textHash(text) !== entry.seal.h) throw modified(entry);
  }
  const byReply = new Map<string, typeof entries>();
  for (const entry of entries) byReply.set(entry.seal.i, [...(byReply.get(entry.seal.i) ?? []), entry]);
  for (const group of byReply.values()) {
    for (const [x, entry] of group.entries()) if (entry.seal.x !== x) throw modified(entry);
    if (group.length !== group[0].seal.c) throw modified(group[group.length - 1]);
  }
}

/**
 * Under thinking type `between_tools` the effort cannot change within a conversation: a block the
 * conversation produced at another effort (its seal carries it) is refused. Source:
 * https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5 (between_tools). Wording ours.
 */
function checkBetweenToolsEffort(
  request: WireRequest,
  { model, kept }: { model: ModelProfile; kept: { i: number; j: number; seal: ThinkingSeal }[] },
): void {
  const effort = betweenToolsEffort(request, model);
  if (!effort) return;
  const other = kept.find((k) => k.seal.e !== undefined && k.seal.e !== effort);
  if (other)
    throw invalid(
      `output_config.effort: with thinking type "between_tools" the effort cannot change within a conversation: messages.${other.i}.content.${other.j} was produced at "${other.seal.e}", this request asks for "${effort}".`,
    );
}

/** The request's effort when its thinking type is `between_tools`, else undefined. */
export function betweenToolsEffort(request: WireRequest, model: ModelProfile): string | undefined {
  const body = request as unknown as Record<string, unknown>;
  const thinking = body.thinking as { type?: unknown } | undefined;
  if (thinking?.type !== "between_tools") return undefined;
  return effectiveEffort(body, model.effort?.default);
}
