// Failed authentications, limited per client address (CF-Connecting-IP, which Cloudflare sets and
// a client cannot; an IPv6 client by its /64). A key that is not active costs a D1 read (and a cache write) before it can be
// refused, so each failure takes a token from the address's bucket in a RateLimiterDO; past
// AUTH_FAILURES_PER_MINUTE the answer is 429 rate_limited with Retry-After instead of 401.
//
// An isolate that saw a refusal remembers the address until that Retry-After: meanwhile its keys
// are answered from the caches only (keys in use there keep working) and any key or ticket that
// would need D1 gets the 429 at once, with no D1 read and no RPC. A request without the header
// (only off Cloudflare: the tests' direct calls) is never counted.
import { mappedV4, parseIPv6 } from "../../core/outbound-url";
import { authFailureRule, takeAuthFailure } from "../../durable-objects/rate-limiter-client";
import { ApiError } from "./errors";

interface Block {
  until: number;
  perMinute: number;
}

/** Addresses this isolate knows to be over their limit; the oldest goes first when full. */
const blocked = new Map<string, Block>();
const MAX_BLOCKED = 10_000;

const tooMany = (perMinute: number, retryAfterSeconds: number) =>
  new ApiError(
    429,
    "rate_limited",
    `too many failed authentications from this address, over its limit of ${perMinute} per minute; retry in ${retryAfterSeconds} s`,
    {
      "Retry-After": String(retryAfterSeconds),
    },
  );

/**
 * The client a request is counted against, or "" when Cloudflare did not give an address. An IPv6
 * client is its /64: one subscriber or host holds the whole prefix, so counting each of its 2^64
 * addresses apart would give it an unlimited number of guesses. An IPv4-mapped address is its IPv4.
 */
export function clientAddress(header: string | undefined): string {
  const address = header?.trim() ?? "";
  if (!address.includes(":")) return address;
  const groups = parseIPv6(address.toLowerCase());
  if (!groups) return address;
  const v4 = mappedV4(groups);
  if (v4) return v4;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** Whether this isolate already knows the address is over its limit (and the limit is still on). */
export function isBlocked(env: Env, address: string, now = Date.now()): boolean {
  const block = address ? blocked.get(address) : undefined;
  if (!block) return false;
  if (block.until > now && authFailureRule(env)) return true;
  blocked.delete(address);
  return false;
}

/** Throws the 429 when this isolate already knows the address is over its limit. */
export function refuseBlocked(env: Env, address: string, now = Date.now()): void {
  const block = isBlocked(env, address, now) ? blocked.get(address) : undefined;
  if (block) throw tooMany(block.perMinute, Math.max(1, Math.ceil((block.until - now) / 1000)));
}

/**
 * Counts a failed authentication of the address. Throws the 429 when the address is over its limit
 * (at once, when this isolate already knows it is); returns when the caller should answer its 401.
 */
export async function countAuthFailure(env: Env, address: string, now = Date.now()): Promise<void> {
  if (!address) return;
  refuseBlocked(env, address, now);
  const decision = await takeAuthFailure(env, address);
  if (decision.ok) return;
  if (blocked.size >= MAX_BLOCKED) blocked.delete(blocked.keys().next().value as string);
  blocked.set(address, { until: now + decision.retryAfterSeconds * 1000, perMinute: decision.perMinute });
  throw tooMany(decision.perMinute, decision.retryAfterSeconds);
}

/** Forgets every address this isolate blocked, as a fresh isolate starts (tests). */
export function forgetBlockedAddresses(): void {
  blocked.clear();
}
