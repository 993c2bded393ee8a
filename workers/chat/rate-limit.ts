// Per-API-key rate limits: every authenticated request takes a token from the key's "requests"
// bucket, and every turn (a POST of messages to a conversation or a channel) and every import (which
// starts the title and fold calls a turn would) also from its "turns" bucket and from its tenant's
// bucket of turns (not one refused for want of a model).
// Over a limit: 429 rate_limited with Retry-After in seconds. The buckets live in one
// RateLimiterDO per key and one per tenant, so the limits hold across isolates and locations.
import type { Context, Next } from "hono";
import { modelProblem } from "../../core/model-provider";
import { rateLimitMessage, refundTurn, takeRateLimit } from "../../durable-objects/rate-limiter-client";
import { ApiError } from "./errors";
import type { AppEnv } from "./types";

const TURN_PATH = /^\/v1\/(conversations|channels)\/[^/]+\/messages$/;
/** A transcript import, new (`/v1/conversations/import`) or into a conversation (`/v1/conversations/:id/import`). */
const IMPORT_PATH = /^\/v1\/conversations\/(?:[^/]+\/)?import$/;

/**
 * What takes a turn token: a POST of messages to a conversation or a channel (a websocket `send`
 * frame counts as one too), or an import, whose history the title and fold calls then read.
 */
export const isTurnRequest = (method: string, path: string): boolean =>
  method === "POST" && (TURN_PATH.test(path) || IMPORT_PATH.test(path));

/**
 * Whether a turn route's answer means no turn ran: a refusal for the request itself (an unknown
 * conversation or channel, a bad body, a refused Idempotency-Key, a paused turn, a body too large)
 * from a route whose turn never started (`turnRan`, set by turns.ts respondTurn on its `turn_start`),
 * or a turn ended after its `turn_start` with nothing saved and nothing spent (`turnUnstarted`,
 * from its events: a 502 `storage_error` "the turn could not start; nothing was saved"), whatever
 * its status and whether it was answered as JSON or as SSE (a 200 once it streams: known only once
 * the stream ends), a 401 for its key revoked meanwhile included. A turn that ran its model calls
 * was billed, whatever it answers: a 404 for its conversation deleted under it, a 401 for its key
 * revoked while it ran. What decides is whether the turn started, not the status (docs/api-notes.md).
 */
async function refusedBeforeRunning(c: Context<AppEnv>): Promise<boolean> {
  if (await c.get("turnUnstarted")) return true;
  const status = c.res.status;
  if (status === 401 || status === 429) return false;
  return status >= 400 && status < 500 && !c.get("turnRan");
}

/**
 * After authentication by the key with this digest (tenantId set): throws the 429 when the key or its tenant is
 * over a limit, else runs the route. A turn the route refuses before it can run gives its turn
 * tokens back, as a websocket `send` frame refused for such a reason does (sockets.ts); the
 * request token stays taken, as any request's.
 */
export async function rateLimited(c: Context<AppEnv>, keyHash: string, next: Next): Promise<void> {
  const tenantId = c.get("tenantId");
  // A turn no model can answer is the route's 503 model_not_configured (requireModel, after this):
  // it takes no turn token, as a websocket `send` frame refused for it takes none.
  const turn = isTurnRequest(c.req.method, c.req.path) && !modelProblem(c.env);
  const decision = await takeRateLimit(c.env, { keyHash, tenantId, turn });
  if (!decision.ok)
    throw new ApiError(429, "rate_limited", rateLimitMessage(decision), {
      "Retry-After": String(decision.retryAfterSeconds),
    });
  await next();
  if (!turn) return;
  const refund = async () => {
    if (!(await refusedBeforeRunning(c))) return;
    // The refusal stands whatever the limiter does: a refund lost only leaves the token spent.
    await refundTurn(c.env, { keyHash, tenantId }).catch((err) => console.error("turn token refund failed", err));
  };
  // An SSE answer has left before its turn ends: its refund (if any) follows the stream's end.
  if ((c.res.headers.get("content-type") ?? "").startsWith("text/event-stream")) c.executionCtx.waitUntil(refund());
  else await refund();
}
