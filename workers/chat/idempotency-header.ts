// The `Idempotency-Key` request header of a turn or a create, validated like the websocket field,
// and a create key's earlier use as the answer (conversation create and import alike).
import type { Context } from "hono";
import { idempotencyKeyProblem } from "../../core/idempotency-key";
import type { KeyedCreate } from "../../durable-objects/conversation-create";
import { ApiError, badRequest } from "./errors";
import type { AppEnv } from "./types";

/** The key, or undefined without the header; a malformed key is a 400 before anything runs. */
export function idempotencyKeyHeader(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return undefined;
  const problem = idempotencyKeyProblem(key);
  if (problem) throw badRequest(`Idempotency-Key: ${problem}`);
  return key;
}

/** A create key's earlier use as the answer: the conversation again (201, as first), or why not. */
export function keyedAnswer(c: Context<AppEnv>, answer: KeyedCreate): Response {
  switch (answer.kind) {
    case "replayed":
      c.header("idempotent-replayed", "true");
      return c.json(answer.view, 201);
    case "reused":
      throw new ApiError(
        422,
        "idempotency_key_reused",
        "Idempotency-Key: this key was already used for a different create request; send a new key for a new request",
      );
    case "deleted":
      throw new ApiError(
        404,
        "not_found",
        `Idempotency-Key: the conversation created with this key (${answer.conversationId}) was deleted; send a new key to create another`,
      );
    case "pending":
      throw new ApiError(
        409,
        "idempotency_in_progress",
        "Idempotency-Key: the conversation created with this key is not ready yet; retry to get it",
        { "retry-after": "1" },
      );
  }
}
