// Per-API-key rate limits: every authenticated request takes a token from the key's "requests"
// bucket, and every turn (a POST of messages to a conversation or a channel) also from its
// "turns" bucket (not a turn refused for want of a model). Over the limit: 429 rate_limited with
// Retry-After in seconds. The buckets live in one RateLimiterDO per key, so the limit holds across
// isolates and locations.
import { modelProblem } from "../../core/model-provider";
import { rateLimitMessage, takeRateLimit } from "../../durable-objects/rate-limiter-client";
import { ApiError } from "./errors";

const TURN_PATH = /^\/v1\/(conversations|channels)\/[^/]+\/messages$/;

/** A turn: a POST of messages to a conversation or a channel (a websocket `send` frame counts as one too). */
export const isTurnRequest = (method: string, path: string): boolean => method === "POST" && TURN_PATH.test(path);

/** Throws the 429 when the key is over a limit. */
export async function enforceRateLimit(
  env: Env,
  request: { keyHash: string; method: string; path: string },
): Promise<void> {
  const { keyHash, method, path } = request;
  // A turn no model can answer is the route's 503 model_not_configured (requireModel, after this):
  // it takes no turn token, as a websocket `send` frame refused for it takes none.
  const turn = isTurnRequest(method, path) && !modelProblem(env);
  const decision = await takeRateLimit(env, keyHash, turn);
  if (decision.ok) return;
  throw new ApiError(429, "rate_limited", rateLimitMessage(decision), {
    "Retry-After": String(decision.retryAfterSeconds),
  });
}
