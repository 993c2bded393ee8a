/**
 * Prompt-caching accounting with Anthropic's semantics, so the project's
 * breakpoint placement can be tested for real cache hits offline.
 *
 * - Breakpoints: `cache_control: {type: "ephemeral"}` on tool definitions,
 *   system text blocks or message content blocks (and the blocks nested in a
 *   tool_result, a search_result or a content-list document), plus the request-level
 *   `cache_control` ("automatic caching": a breakpoint on the last block).
 *   At most 4 per request, else a 400 like the real API.
 * - Prefix order is tools → system → messages; a breakpoint's cacheable
 *   prefix is everything up to and including its block. The key is a hash of
 *   the model name and the JSON of that prefix with its keys in the order the
 *   client sent them (cache markers excluded, so moving a breakpoint does not
 *   change the content it covers). Nothing is normalised: the real cache is
 *   a byte-prefix match, so a client that reorders the keys of a tool input
 *   or schema misses, and the simulator must show it.
 * - `tool_choice`, `thinking` and the effort (`output_config.effort`) are part of
 *   the messages tier: changing any of them (a tool choice; thinking on or off,
 *   its budget; the effort) keeps the tools and system entries but misses every
 *   entry inside `messages`. Thinking and effort count by their effective values
 *   (the model's defaults filled in), since "setting a parameter explicitly to its
 *   default is equivalent to omitting it and does not invalidate"
 *   (https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting).
 * - Reads: for each breakpoint the cache is checked at that block and, like
 *   the real API, at up to 20 block boundaries before it; the longest hit is
 *   read (`cache_read_input_tokens`) and its lifetime refreshed.
 * - Writes: every breakpoint beyond the read prefix is written;
 *   `cache_creation_input_tokens` = longest written prefix − read prefix.
 * - `input_tokens` = total − read − creation (uncached tokens only).
 * - Prefixes shorter than the model's minimum are neither read nor written.
 * - Lifetime 5 minutes (or 1 hour with `ttl: "1h"`), refreshed on each hit.
 *   A 1-hour breakpoint after a 5-minute one is a 400, as is a request-level
 *   TTL that differs from an explicit marker on the last block.
 *
 * test/fixtures/prompt-cache/ holds one request/usage fixture per documented
 * rule (test/unit/prompt-cache-rules.test.ts).
 *
 * The cache is per isolate (module state), bounded, and its clock is passed
 * in by the caller so tests can move time.
 */
import type { ModelEntry } from "../models/catalog";
import { blockTokens, type Counter, overheadTokens, textTokens, toolTokens } from "./counting";
import { invalid } from "./errors";
import { hashHex, hashString, hashUpdate, type Hash64 } from "./hash";
import { resolveModel } from "./model";
import { isObject } from "./rules/context";
import { effectiveEffort } from "./rules/request";
import { blocksOf, type CacheControl, type WireBlock, type WireRequest } from "./wire";

export const MAX_BREAKPOINTS = 4;
export const LOOKBACK_BLOCKS = 20;
const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
const MAX_ENTRIES = 1_000;

/**
 * Minimum cacheable prefix: the model entry's `minCacheTokens` (core/models/catalog.ts, from each
 * model's page and https://platform.claude.com/docs/en/build-with-claude/prompt-caching); test
 * models take their template's. A model the offline model does not know gets 1,024.
 */
export function minimumCacheableTokens(model: string): number {
  return resolveModel(model)?.minCacheTokens ?? 1_024;
}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

interface Segment {
  /** Where the block sits in the request, for error messages. */
  path: string;
  json: string;
  tokens: number;
  breakpoint: CacheControl | null;
}

interface Entry {
  expiresAt: number;
  ttlMs: number;
}

const cache = new Map<string, Entry>();

/** Forget every cached prefix (tests; a new isolate starts empty too). */
export function resetOfflineCache(): void {
  cache.clear();
}

function marker(value: unknown): CacheControl | null {
  const control = value as CacheControl | null | undefined;
  return control?.type === "ephemeral" ? control : null;
}

function withoutMarker<T extends object>(value: T): Omit<T, "cache_control"> {
  const { cache_control: _ignored, ...rest } = value as T & { cache_control?: unknown };
  return rest;
}

// JSON.parse keeps the sender's key order and JSON.stringify reproduces it, so this is the
// request's bytes up to insignificant whitespace.
const asSent = (value: unknown): string => JSON.stringify(value);

/** The counter for a request's model when the caller gives none (ratio from the catalog, 1 if unknown). */
export function counterFor(model: string): Counter {
  return { ratio: resolveModel(model)?.tokenizerRatio ?? 1 };
}

/**
 * The blocks nested in a block that may carry breakpoints of their own, with the path suffix the API
 * names them by: a tool_result's content, a search_result's text blocks (SDK
 * `SearchResultBlockParam.content: Array<TextBlockParam>`) and the text and image blocks of a document
 * whose source is a content list (`ContentBlockSourceContent = TextBlockParam | ImageBlockParam`), at
 * any depth (a search_result or document inside a tool_result). `hollow` is the block with that list
 * replaced by its length.
 */
function innerOf(block: WireBlock): { blocks: WireBlock[]; at: string; hollow: WireBlock } | null {
  if ((block.type === "tool_result" || block.type === "search_result") && Array.isArray(block.content)) {
    const blocks = block.content as WireBlock[];
    return { blocks, at: `${block.type}.content`, hollow: { ...block, content: blocks.length } };
  }
  const source = block.source as { type?: unknown; content?: unknown } | null | undefined;
  if (block.type === "document" && source?.type === "content" && Array.isArray(source.content)) {
    const blocks = source.content as WireBlock[];
    return {
      blocks,
      at: "document.source.content.content",
      hollow: { ...block, source: { ...source, content: blocks.length } },
    };
  }
  return null;
}

/** Whether a breakpoint sits anywhere inside the block (not on the block itself). */
function hasInnerMarker(block: WireBlock): boolean {
  return (innerOf(block)?.blocks ?? []).some((b) => isBlock(b) && (marker(b.cache_control) || hasInnerMarker(b)));
}

const isBlock = (value: unknown): value is WireBlock => value !== null && typeof value === "object";

/**
 * One block as segments. A block whose own blocks carry breakpoints is split: its opening (which
 * weighs what the whole block weighs, less its blocks), then each of its blocks (split again if need
 * be), then the block's own breakpoint, if any (it covers the whole block). Any other block is one
 * segment. `identity` is what keys the block beside its content (a top-level block's role and place).
 */
function pushBlock(
  segments: Segment[],
  {
    block,
    path,
    counter,
    identity,
    opening = 0,
  }: { block: WireBlock; path: string; counter: Counter; identity?: object; opening?: number },
): void {
  const key = (value: object) => asSent(identity ? { ...identity, block: value } : { nested: value });
  const inner = hasInnerMarker(block) ? innerOf(block) : null;
  if (!inner) {
    segments.push({
      path,
      json: key(withoutMarker(block)),
      tokens: blockTokens(block, counter) + opening,
      breakpoint: marker(block.cache_control),
    });
    return;
  }
  const blocks = inner.blocks.filter(isBlock);
  const innerTokens = blocks.reduce((sum, b) => sum + blockTokens(b, counter), 0);
  segments.push({
    path,
    json: key(withoutMarker(inner.hollow)),
    tokens: Math.max(0, blockTokens(block, counter) - innerTokens) + opening,
    breakpoint: null,
  });
  inner.blocks.forEach((b, k) => {
    if (isBlock(b)) pushBlock(segments, { block: b, path: `${path}.${inner.at}.${k}`, counter });
  });
  if (marker(block.cache_control))
    segments.push({ path, json: asSent({ end: path }), tokens: 0, breakpoint: marker(block.cache_control) });
}

/** What a request's thinking and effort settings resolve to: the model's defaults where it sets none. */
export type ModelSettings = Pick<ModelEntry, "thinking" | "effort">;

/**
 * The thinking configuration the model runs: an omitted one is the model's default (adaptive, or
 * off), a `display` equal to the model's default is no change, and key order does not matter.
 */
function effectiveThinking(thinking: unknown, model: ModelSettings): Record<string, unknown> {
  const sent = isObject(thinking)
    ? thinking
    : { type: model.thinking.whenOmitted === "adaptive" ? "adaptive" : "disabled" };
  const kept = Object.entries(sent).filter(
    ([key, value]) => !(key === "display" && (value === null || value === model.thinking.display)),
  );
  return Object.fromEntries(kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * What keys the messages tier besides the messages: tool_choice, the thinking configuration and the
 * effort (Anthropic's invalidation table), the latter two by their effective values when the model
 * is known, as sent otherwise.
 */
function messagesTierKey(request: WireRequest, model: ModelSettings | null): string {
  const toolChoice = request.tool_choice ?? null;
  if (!model) return asSent([toolChoice, request.thinking ?? null]);
  const effort = effectiveEffort(request as unknown as Record<string, unknown>, model.effort?.default) ?? null;
  return asSent([toolChoice, effectiveThinking(request.thinking, model), { effort }]);
}

/** The request as an ordered list of cacheable blocks; their token sum is the request's input tokens. */
function segmentsOf(request: WireRequest, counter: Counter, model: ModelSettings | null = null): Segment[] {
  const segments: Segment[] = [];
  for (const [n, tool] of (request.tools ?? []).entries()) {
    segments.push({
      path: `tools.${n}`,
      json: asSent({ tool: withoutMarker(tool) }),
      tokens: toolTokens(tool, counter),
      breakpoint: marker(tool.cache_control),
    });
  }
  if (typeof request.system === "string") {
    segments.push({
      path: "system",
      json: asSent({ system: request.system }),
      tokens: textTokens(request.system, counter.ratio),
      breakpoint: null,
    });
  } else {
    for (const [n, block] of (request.system ?? []).entries()) {
      segments.push({
        path: `system.${n}`,
        json: asSent({ system: withoutMarker(block) }),
        tokens: blockTokens(block, counter),
        breakpoint: marker(block.cache_control),
      });
    }
  }
  // tool_choice, thinking and effort key the messages tier only (Anthropic's invalidation table).
  const toolChoice = messagesTierKey(request, model);
  let firstMessageBlock = true;
  for (const [m, message] of request.messages.entries()) {
    const blocks = blocksOf(message.content);
    if (blocks.length === 0) {
      segments.push({
        path: `messages.${m}`,
        json: asSent({ role: message.role, empty: true, ...(firstMessageBlock ? { toolChoice } : {}) }),
        tokens: overheadTokens(counter),
        breakpoint: null,
      });
      firstMessageBlock = false;
    }
    blocks.forEach((block, i) => {
      const scope = firstMessageBlock ? { toolChoice } : {};
      firstMessageBlock = false;
      const path = `messages.${m}.content.${i}`;
      // Role and message start are part of identity: the same text in another turn is another prompt.
      const identity = { ...scope, role: message.role, start: i === 0 };
      const opening = i === 0 ? overheadTokens(counter) : 0;
      pushBlock(segments, { block, path, counter, identity, opening });
    });
  }
  const automatic = marker(request.cache_control);
  const last = segments[segments.length - 1];
  if (automatic && last && !last.breakpoint) last.breakpoint = automatic;
  else if (automatic && last?.breakpoint && ttlOf(last.breakpoint) !== ttlOf(automatic)) {
    throw invalid(
      "cache_control.ttl: The request-level cache_control ttl must match the cache_control ttl of the last block.",
    );
  }
  return segments;
}

const ttlOf = (control: CacheControl): "5m" | "1h" => (control.ttl === "1h" ? "1h" : "5m");

/** Token count of the request up to and including each cacheable block, in prefix order. */
export function blockPrefixTokens(request: WireRequest, counter: Counter = counterFor(request.model)): number[] {
  let running = 0;
  return segmentsOf(request, counter).map((segment) => (running += segment.tokens));
}

/**
 * At most 4 breakpoints (a request-level cache_control takes a slot), and no 1-hour entry after a
 * 5-minute one, in tools → system → messages order. Source:
 * https://platform.claude.com/docs/en/build-with-claude/prompt-caching (wording from the API,
 * tghamm/Anthropic.SDK#50 and cnighswonger/claude-code-cache-fix#44).
 */
export function checkBreakpoints(
  request: WireRequest,
  counter: Counter = counterFor(request.model),
  model: ModelSettings | null = null,
): Segment[] {
  const segments = segmentsOf(request, counter, model);
  const marked = segments.filter((segment) => segment.breakpoint);
  if (marked.length > MAX_BREAKPOINTS) {
    throw invalid(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`);
  }
  let seenShort = false;
  for (const segment of marked) {
    const ttl = ttlOf(segment.breakpoint!);
    if (ttl === "1h" && seenShort) {
      throw invalid(
        `${segment.path}.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: \`tools\`, \`system\`, \`messages\`.`,
      );
    }
    if (ttl === "5m") seenShort = true;
  }
  return segments;
}

function isLive(key: string, now: number): boolean {
  const entry = cache.get(key);
  if (!entry) return false;
  if (entry.expiresAt > now) return true;
  cache.delete(key);
  return false;
}

function store(key: string, ttlMs: number, now: number): void {
  // Delete first so Map order tracks recency and the oldest entry is evicted first.
  cache.delete(key);
  cache.set(key, { expiresAt: now + ttlMs, ttlMs });
  if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
}

/**
 * Account one request against the cache (mutating it: hits refresh, misses write) and return the
 * usage split. Throws ApiError on > 4 breakpoints or a misordered ttl (checkBreakpoints).
 */
export function accountPromptCache(
  request: WireRequest,
  {
    now,
    counter = counterFor(request.model),
    minimum = minimumCacheableTokens(request.model),
    model = resolveModel(request.model),
  }: { now: number; counter?: Counter; minimum?: number; model?: ModelSettings | null },
): { total: number; usage: CacheUsage } {
  const segments = checkBreakpoints(request, counter, model);
  const breakpoints = segments.flatMap((segment, i) => (segment.breakpoint ? [i] : []));

  const prefixTokens: number[] = [];
  const keys: string[] = [];
  let running = 0;
  let state: Hash64 = hashString(`model:${request.model}`);
  for (const segment of segments) {
    running += segment.tokens;
    state = hashUpdate(state, segment.json);
    prefixTokens.push(running);
    keys.push(hashHex(state));
  }
  const total = running;

  let readAt = -1;
  for (const breakpoint of breakpoints) {
    for (let p = breakpoint; p >= Math.max(0, breakpoint - LOOKBACK_BLOCKS); p--) {
      if (p <= readAt || prefixTokens[p] < minimum) break;
      if (isLive(keys[p], now)) {
        readAt = p;
        break;
      }
    }
  }
  const read = readAt >= 0 ? prefixTokens[readAt] : 0;
  if (readAt >= 0) store(keys[readAt], cache.get(keys[readAt])!.ttlMs, now);

  const creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
  let writtenUpTo = read;
  for (const breakpoint of breakpoints) {
    if (breakpoint <= readAt || prefixTokens[breakpoint] < minimum) continue;
    const ttl = ttlOf(segments[breakpoint].breakpoint!);
    store(keys[breakpoint], TTL_MS[ttl], now);
    // Tokens between the previous boundary and this breakpoint are billed at this breakpoint's TTL.
    creation[ttl === "1h" ? "ephemeral_1h_input_tokens" : "ephemeral_5m_input_tokens"] +=
      prefixTokens[breakpoint] - writtenUpTo;
    writtenUpTo = prefixTokens[breakpoint];
  }
  const created = writtenUpTo - read;
  return {
    total,
    usage: {
      input_tokens: total - read - created,
      cache_creation_input_tokens: created,
      cache_read_input_tokens: read,
      cache_creation: creation,
    },
  };
}
