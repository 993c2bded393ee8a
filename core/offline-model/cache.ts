/**
 * Prompt-caching accounting with Anthropic's semantics, so the project's
 * breakpoint placement can be tested for real cache hits offline.
 *
 * - Breakpoints: `cache_control: {type: "ephemeral"}` on tool definitions,
 *   system text blocks or message content blocks, plus the request-level
 *   `cache_control` ("automatic caching": a breakpoint on the last block).
 *   At most 4 per request, else a 400 like the real API.
 * - Prefix order is tools → system → messages; a breakpoint's cacheable
 *   prefix is everything up to and including its block. The key is a hash of
 *   the model name and the JSON of that prefix with its keys in the order the
 *   client sent them (cache markers excluded, so moving a breakpoint does not
 *   change the content it covers). Nothing is normalised: the real cache is
 *   a byte-prefix match, so a client that reorders the keys of a tool input
 *   or schema misses, and the simulator must show it.
 * - `tool_choice` is part of the messages tier: changing it keeps the tools
 *   and system entries but misses every entry inside `messages`.
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
import { countBlockTokens, countTokens, countToolTokens, MESSAGE_OVERHEAD_TOKENS } from "../tokens";
import { hashHex, hashString, hashUpdate, type Hash64 } from "./hash";
import { blocksOf, type CacheControl, type WireRequest } from "./wire";

export const MAX_BREAKPOINTS = 4;
export const LOOKBACK_BLOCKS = 20;
const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
const MAX_ENTRIES = 1_000;

/**
 * Minimum cacheable prefix per model family, from Anthropic's prompt-caching
 * docs: Opus 5, Fable 5.1 and Mythos 5.1 → 512; Opus 4.7, Mythos Preview and
 * the Haiku 3 family → 2,048; Opus 4.5/4.6 and Haiku 4.5 → 4,096; everything
 * else (Sonnet 4/4.5/4.6/5, Opus 4/4.1/4.8, offline-*) → 1,024.
 */
export function minimumCacheableTokens(model: string): number {
  if (/opus-4-[56]|haiku-4-5/.test(model)) return 4_096;
  if (/opus-4-7|mythos-preview|3-haiku|3-5-haiku|haiku-3/.test(model)) return 2_048;
  if (/opus-5|fable-5-1|mythos-5-1/.test(model)) return 512;
  return 1_024;
}

export class CacheControlError extends Error {}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

interface Segment {
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

/** The request as an ordered list of cacheable blocks; their token sum equals countRequestTokens. */
function segmentsOf(request: WireRequest): Segment[] {
  const segments: Segment[] = [];
  for (const tool of request.tools ?? []) {
    segments.push({ json: asSent({ tool: withoutMarker(tool) }), tokens: countToolTokens(tool), breakpoint: marker(tool.cache_control) });
  }
  if (typeof request.system === "string") {
    segments.push({ json: asSent({ system: request.system }), tokens: countTokens(request.system), breakpoint: null });
  } else {
    for (const block of request.system ?? []) {
      segments.push({ json: asSent({ system: withoutMarker(block) }), tokens: countBlockTokens(block), breakpoint: marker(block.cache_control) });
    }
  }
  // tool_choice keys the messages tier only (Anthropic's invalidation table).
  const toolChoice = asSent(request.tool_choice ?? null);
  let firstMessageBlock = true;
  for (const message of request.messages) {
    const blocks = blocksOf(message.content);
    if (blocks.length === 0) {
      segments.push({ json: asSent({ role: message.role, empty: true, ...(firstMessageBlock ? { toolChoice } : {}) }), tokens: MESSAGE_OVERHEAD_TOKENS, breakpoint: null });
      firstMessageBlock = false;
    }
    blocks.forEach((block, i) => {
      const scope = firstMessageBlock ? { toolChoice } : {};
      firstMessageBlock = false;
      segments.push({
        // Role and message start are part of identity: the same text in another turn is another prompt.
        json: asSent({ ...scope, role: message.role, start: i === 0, block: withoutMarker(block) }),
        tokens: countBlockTokens(block) + (i === 0 ? MESSAGE_OVERHEAD_TOKENS : 0),
        breakpoint: marker(block.cache_control),
      });
    });
  }
  const automatic = marker(request.cache_control);
  const last = segments[segments.length - 1];
  if (automatic && last && !last.breakpoint) last.breakpoint = automatic;
  else if (automatic && last?.breakpoint && ttlOf(last.breakpoint) !== ttlOf(automatic)) {
    throw new CacheControlError("The request-level cache_control ttl must match the cache_control ttl of the last block.");
  }
  return segments;
}

const ttlOf = (control: CacheControl): "5m" | "1h" => (control.ttl === "1h" ? "1h" : "5m");

/** Token count of the request up to and including each cacheable block, in prefix order. */
export function blockPrefixTokens(request: WireRequest): number[] {
  let running = 0;
  return segmentsOf(request).map((segment) => (running += segment.tokens));
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
 * Account one request against the cache (mutating it: hits refresh, misses
 * write) and return the usage split. Throws CacheControlError on > 4 breakpoints.
 */
export function accountPromptCache(request: WireRequest, now: number): { total: number; usage: CacheUsage } {
  const segments = segmentsOf(request);
  const breakpoints = segments.flatMap((segment, i) => (segment.breakpoint ? [i] : []));
  if (breakpoints.length > MAX_BREAKPOINTS) {
    throw new CacheControlError(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`);
  }
  const ttls = breakpoints.map((i) => ttlOf(segments[i].breakpoint!));
  if (ttls.some((ttl, i) => ttl === "1h" && ttls.slice(0, i).includes("5m"))) {
    throw new CacheControlError('A cache_control with ttl "1h" must not come after one with ttl "5m".');
  }

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
  const minimum = minimumCacheableTokens(request.model);

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
    creation[ttl === "1h" ? "ephemeral_1h_input_tokens" : "ephemeral_5m_input_tokens"] += prefixTokens[breakpoint] - writtenUpTo;
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
