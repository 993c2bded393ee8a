// Asking the RateLimiterDOs for tokens: the rules the variables set, one RPC per object asked, and
// the words of a refusal. Used by the chat worker's middleware and by the conversation object for
// websocket `send` frames, so both count against the same buckets. A key's requests and turns are
// counted in the key's object; every turn also in the tenant's object, so a key at its turn limit
// cannot go on by minting fresh keys (each with a full bucket of its own). Failed authentications
// are counted the same way, in one RateLimiterDO per client address.
import { envConfig } from "../core/env-config";
import type { TurnEvent } from "../core/events";
import { sha256Hex } from "../core/ids";
import type { RateDecision, RateRule } from "./rate-limiter-do";

/** The bucket of the tenant's object: named apart from a key's "turns", so a refusal says whose limit it was. */
const TENANT_TURNS = "tenant_turns";

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

/** The tenant's turn rule, or null when the limit is off. */
function tenantTurnRule(env: Env): RateRule | null {
  const turns = envConfig(env).TENANT_TURN_RATE_LIMIT_PER_MINUTE;
  return turns > 0 ? { bucket: TENANT_TURNS, perMinute: turns } : null;
}

const limiterOf = (env: Env, name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));

/**
 * The tenant's object, named by a digest of the prefixed tenant id: never the name of a key
 * digest's object, nor of an `address:` one.
 */
const tenantLimiter = async (env: Env, tenantId: string) => limiterOf(env, await sha256Hex(`tenant:${tenantId}`));

export interface RateAsk {
  /** The key's digest (its object's name). */
  keyHash: string;
  /** The key's tenant: a turn takes from the tenant's bucket too. */
  tenantId: string;
  /** Whether to take a request token (false: one was taken already, only the turn's is left). Default true. */
  requests?: boolean;
  turn: boolean;
}

/**
 * Takes from the key's buckets and, for a turn the key passes, the tenant's: one RPC per object,
 * none at all when every limit is off. The key's object is asked first and the tenant's only once
 * it passed, so a turn the key refuses never holds a tenant token, not even while the key's object
 * answers: asked at once, another key's turn arriving in that moment would be refused in the
 * tenant's name though the tenant had a token. The tenant refusing, the key's turn token is given
 * back (a refused turn takes no turn token anywhere); the key's request token stays taken.
 */
export async function takeRateLimit(env: Env, ask: RateAsk): Promise<RateDecision> {
  const { keyHash, tenantId, requests = true, turn } = ask;
  const keyRules = rateRules(env, turn).filter((rule) => requests || rule.bucket !== "requests");
  const byKey = keyRules.length ? await limiterOf(env, keyHash).take(keyRules) : ({ ok: true } as const);
  const tenantRule = turn ? tenantTurnRule(env) : null;
  if (!byKey.ok || !tenantRule) return byKey;
  const byTenant = await (await tenantLimiter(env, tenantId)).take([tenantRule]);
  if (!byTenant.ok) await refundTurn(env, { keyHash, tenantId: null });
  return byTenant;
}

/**
 * Gives back the turn token a turn took from the key's bucket (keyHash) and the tenant's
 * (tenantId), for a turn refused before it could run: one RPC per object, none when its limit is off.
 */
export async function refundTurn(env: Env, of: { keyHash: string | null; tenantId: string | null }): Promise<void> {
  const keyRules = rateRules(env, true).filter((rule) => rule.bucket === "turns");
  const tenantRule = tenantTurnRule(env);
  await Promise.all([
    of.keyHash && keyRules.length ? limiterOf(env, of.keyHash).refund(keyRules) : undefined,
    of.tenantId && tenantRule ? (await tenantLimiter(env, of.tenantId)).refund([tenantRule]) : undefined,
  ]);
}

/**
 * Follows a turn's events (`see` each) to tell whether it stopped after its `turn_start` and before
 * its model loop with nothing saved and nothing spent: no `message`, and a `turn_end` whose usage is
 * all zero, that either failed (an `error`: a write before the loop failed, a 502 `storage_error`
 * "the turn could not start; nothing was saved"; its conversation gone; it paused or refused) or was
 * stopped before any model call (`stop_reason` "interrupted" with no model time: a queued turn a
 * stop cancelled, which never ran). Such a turn gives its turn tokens back as one refused before
 * it ran, whether its answer is JSON, SSE or a websocket's frames: what decides is whether the turn
 * started, not the status. A turn that ran its model calls saved its prompt first (a `message`), so
 * it is never one; nor is a replayed outcome, nor a turn whose events were not heard to their end.
 */
export class UnstartedTurn {
  private started = false;
  private failed = false;
  private stoppedUncalled = false;
  private saved = false;
  private spentNothing: boolean | null = null;

  see(event: TurnEvent): void {
    if (event.type === "turn_start" && !event.replayed) this.started = true;
    else if (event.type === "message") this.saved = true;
    else if (event.type === "error") this.failed = true;
    else if (event.type === "turn_end") {
      this.spentNothing = Object.values(event.usage).every((tokens) => tokens === 0);
      this.stoppedUncalled = event.stop_reason === "interrupted" && event.timing.modelMs === 0;
    }
  }

  /** Whether the events seen so far are such a turn's, heard to its `turn_end`. */
  get unstarted(): boolean {
    return this.started && (this.failed || this.stoppedUncalled) && !this.saved && this.spentNothing === true;
  }
}

/** A turn's sink calling `refund` when its events end (its `turn_end`) as an UnstartedTurn's. */
export function whenUnstarted(refund: () => void): (event: TurnEvent) => void {
  const turn = new UnstartedTurn();
  return (event) => {
    turn.see(event);
    if (event.type === "turn_end" && turn.unstarted) refund();
  };
}

/**
 * One turn token of the tenant's (TENANT_TURN_RATE_LIMIT_PER_MINUTE), for a turn no key sends (an
 * automation's): one RPC, none when the limit is off.
 */
export async function takeTenantTurn(env: Env, tenantId: string): Promise<RateDecision> {
  const rule = tenantTurnRule(env);
  if (!rule) return { ok: true };
  return (await tenantLimiter(env, tenantId)).take([rule]);
}

export function rateLimitMessage(decision: Extract<RateDecision, { ok: false }>): string {
  if (decision.bucket === TENANT_TURNS)
    return `this tenant is over its limit of ${decision.perMinute} turns per minute (all its API keys together); retry in ${decision.retryAfterSeconds} s`;
  const what = decision.bucket === "turns" ? "turns" : "requests";
  return `this API key is over its limit of ${decision.perMinute} ${what} per minute; retry in ${decision.retryAfterSeconds} s`;
}

/** A refused websocket frame's error, as the HTTP 429 of the same request says it. */
export const rateLimitedError = (decision: Extract<RateDecision, { ok: false }>) => ({
  type: "rate_limited",
  status: 429,
  message: rateLimitMessage(decision),
  retryAfterSeconds: decision.retryAfterSeconds,
});

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
  return limiterOf(env, await sha256Hex(`address:${address}`)).take([rule]);
}
