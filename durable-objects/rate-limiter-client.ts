// Asking a key's RateLimiterDO for tokens: the rules the variables set, one RPC per ask, and the
// words of a refusal. Used by the chat worker's middleware and by the conversation object for
// websocket `send` frames, so both count against the same buckets. Failed authentications are
// counted the same way, in one RateLimiterDO per client address.
import { envConfig } from "../core/env-config";
import { sha256Hex } from "../core/ids";
import type { RateDecision, RateRule } from "./rate-limiter-do";

export function rateRules(env: Env, turn: boolean): RateRule[] {
  const rules: RateRule[] = [];
  const requests = envConfig(env).RATE_LIMIT_PER_MINUTE;
  if (requests > 0) rules.push({ bucket: "requests", perMinute: requests });
  if (turn) {
    const turns = envConfig(env).TURN_RATE_LIMIT_PER_MINUTE;
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

/** The failed-authentication rule of a client address, or null when the limit is off. */
export function authFailureRule(env: Env): RateRule | null {
  const failures = envConfig(env).AUTH_FAILURES_PER_MINUTE;
  return failures > 0 ? { bucket: "auth_failures", perMinute: failures } : null;
}

/**
 * Takes one failed authentication from the address's bucket. The object is named by a digest of
 * the address (prefixed, so it never shares a name with a key digest's object).
 */
export async function takeAuthFailure(env: Env, address: string): Promise<RateDecision> {
  const rule = authFailureRule(env);
  if (!rule) return { ok: true };
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(await sha256Hex(`address:${address}`))).take([rule]);
}
