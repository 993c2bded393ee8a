// The `Idempotency-Key` request header of a turn, validated like the websocket field.
import type { Context } from "hono";
import { idempotencyKeyProblem } from "../../core/idempotency-key";
import { badRequest } from "./errors";
import type { AppEnv } from "./types";

/** The key, or undefined without the header; a malformed key is a 400 before anything runs. */
export function idempotencyKeyHeader(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return undefined;
  const problem = idempotencyKeyProblem(key);
  if (problem) throw badRequest(`Idempotency-Key: ${problem}`);
  return key;
}
