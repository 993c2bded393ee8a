// RateLimiterDO: one per API key (named by the key's SHA-256, never the key), one per tenant for
// its turns across all its keys (named by a digest of the tenant id), and one per client address
// for its failed authentications (named by a digest of the address), holding token
// buckets in memory. A bucket of N per minute holds at most N tokens and refills N/60 a second,
// so a key may burst a minute's worth and then runs at the steady rate; a refusal says exactly
// when the next token lands. State is deliberately memory-only: losing it on eviction only
// forgives a burst, and a request never waits for a storage write.
import { DurableObject } from "cloudflare:workers";

export interface RateRule {
  /** Which bucket of this object: "requests", "turns", "tenant_turns", "auth_failures". */
  bucket: string;
  perMinute: number;
}

export type RateDecision = { ok: true } | { ok: false; bucket: string; perMinute: number; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
  perMinute: number;
}

export class RateLimiterDO extends DurableObject<Env> {
  private readonly buckets = new Map<string, Bucket>();

  /** Takes one token from every bucket named, or none if any is empty. */
  take(rules: RateRule[], now = Date.now()): RateDecision {
    const current = rules.map((rule) => {
      const b = this.buckets.get(rule.bucket);
      const perMs = rule.perMinute / 60_000;
      const tokens =
        !b || b.perMinute !== rule.perMinute
          ? rule.perMinute
          : Math.min(rule.perMinute, b.tokens + Math.max(0, now - b.at) * perMs);
      return { rule, tokens, perMs };
    });
    // Every empty bucket must refill before the request can pass: the one that takes longest is
    // named, so a client that waits Retry-After is not refused again by another.
    const waits = current
      .filter((c) => c.tokens < 1)
      .map((c) => ({ c, seconds: Math.max(1, Math.ceil((1 - c.tokens) / c.perMs / 1000)) }));
    if (waits.length) {
      for (const c of current)
        this.buckets.set(c.rule.bucket, { tokens: c.tokens, at: now, perMinute: c.rule.perMinute });
      const longest = waits.reduce((a, b) => (b.seconds > a.seconds ? b : a));
      return {
        ok: false,
        bucket: longest.c.rule.bucket,
        perMinute: longest.c.rule.perMinute,
        retryAfterSeconds: longest.seconds,
      };
    }
    for (const c of current)
      this.buckets.set(c.rule.bucket, { tokens: c.tokens - 1, at: now, perMinute: c.rule.perMinute });
    return { ok: true };
  }

  /**
   * Gives back one token to every bucket named (never past its cap): a turn taken for a request
   * that was then refused before it could run (see workers/chat/rate-limit.ts). A bucket this
   * object does not hold, or holds at another rate, is full as far as that rule goes: nothing to give.
   */
  refund(rules: RateRule[], now = Date.now()): void {
    for (const rule of rules) {
      const b = this.buckets.get(rule.bucket);
      if (!b || b.perMinute !== rule.perMinute) continue;
      const tokens = Math.min(rule.perMinute, b.tokens + Math.max(0, now - b.at) * (rule.perMinute / 60_000) + 1);
      this.buckets.set(rule.bucket, { tokens, at: now, perMinute: rule.perMinute });
    }
  }
}
