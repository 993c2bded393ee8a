// Per-API-key rate limits: every authenticated request takes a token from the key's "requests"
// bucket, and every turn (a POST of messages to a conversation or a channel) also from its
// "turns" bucket. Over the limit: 429 rate_limited with Retry-After in seconds. The buckets live
// in one RateLimiterDO per key, so the limit holds across isolates and locations.
import type { RateDecision, RateRule } from "../../durable-objects/rate-limiter-do";
import { ApiError } from "./errors";

/** Defaults when the variables are unset; "0" turns a limit off (benchmarks, local load tests). */
export const DEFAULT_REQUESTS_PER_MINUTE = 600;
export const DEFAULT_TURNS_PER_MINUTE = 60;

const TURN_PATH = /^\/v1\/(conversations|channels)\/[^/]+\/messages$/;

function perMinute(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
}

/** A turn: a POST of messages to a conversation or a channel (a websocket `send` frame counts as one too). */
export const isTurnRequest = (method: string, path: string): boolean => method === "POST" && TURN_PATH.test(path);

export function rateRules(env: Env, turn: boolean): RateRule[] {
  const rules: RateRule[] = [];
  const requests = perMinute(env.RATE_LIMIT_PER_MINUTE, DEFAULT_REQUESTS_PER_MINUTE);
  if (requests > 0) rules.push({ bucket: "requests", perMinute: requests });
  if (turn) {
    const turns = perMinute(env.TURN_RATE_LIMIT_PER_MINUTE, DEFAULT_TURNS_PER_MINUTE);
    if (turns > 0) rules.push({ bucket: "turns", perMinute: turns });
  }
  return rules;
}

/** Takes from the key's buckets: one RPC, and none at all when every limit is off. */
export async function takeRateLimit(env: Env, keyHash: string, turn: boolean): Promise<RateDecision> {
  const rules = rateRules(env, turn);
  if (!rules.length) return { ok: true };
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyHash)).take(rules);
}

export function rateLimitMessage(decision: Extract<RateDecision, { ok: false }>): string {
  const what = decision.bucket === "turns" ? "turns" : "requests";
  return `this API key is over its limit of ${decision.perMinute} ${what} per minute; retry in ${decision.retryAfterSeconds} s`;
}

/** Throws the 429 when the key is over a limit. */
export async function enforceRateLimit(env: Env, keyHash: string, method: string, path: string): Promise<void> {
  const decision = await takeRateLimit(env, keyHash, isTurnRequest(method, path));
  if (decision.ok) return;
  throw new ApiError(429, "rate_limited", rateLimitMessage(decision), { "Retry-After": String(decision.retryAfterSeconds) });
}
