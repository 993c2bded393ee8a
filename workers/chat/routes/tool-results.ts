// POST /v1/conversations/:id/tool-results: a client answers the client tool calls its paused turn
// waits on, and the same turn goes on, answered like a turn request (JSON, or SSE on request).
import { Hono } from "hono";
import { isId } from "../../../core/ids";
import { toolResultsBodySchema } from "../../../core/client-tools";
import type { TurnEvent } from "../../../core/events";
import { ApiError, notFound } from "../errors";
import { idempotencyKeyHeader } from "../idempotency-header";
import { requireModel, respondTurn } from "../turns";
import { ndjsonEvents } from "../turn-response";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";
import { turnDoc } from "../openapi/turn-doc";

export const toolResultRoutes = new Hono<AppEnv>();

toolResultRoutes.post(
  "/",
  turnDoc("Post client tool results; the paused turn goes on", {
    idempotent: true,
    description:
      "Answers every call of the paused turn's `requires_action` at once (a partial post is a 400 naming the missing ids). The same turn (same turnId) then continues and is answered like a turn request. Ids already answered are a 409, ids no paused call waits on a 400; either way nothing is written.",
  }),
  ...jsonBody(toolResultsBodySchema),
  requireModel,
  async (c) => {
    const conversationId = c.req.param("id") ?? "";
    if (!isId("conv", conversationId)) throw notFound("conversation");
    const ref = { tenantId: c.get("tenantId"), conversationId };
    const stub = c.env.CONVERSATION.get(c.env.CONVERSATION.idFromName(conversationId));
    const answer = await stub.postToolResults(ref, c.req.valid("json").results, idempotencyKeyHeader(c));
    if (!answer) throw notFound("conversation");
    if ("refused" in answer) throw new ApiError(answer.refused.status, answer.refused.type, answer.refused.message, answer.refused.type === "idempotency_in_progress" ? { "retry-after": "1" } : {});
    if ("replay" in answer) {
      const replay = answer.replay as TurnEvent[];
      return respondTurn(c, conversationId, new ReadableStream<TurnEvent>({ start: (s) => (replay.forEach((e) => s.enqueue(e)), s.close()) }), true);
    }
    return respondTurn(c, conversationId, (answer as ReadableStream<Uint8Array>).pipeThrough(ndjsonEvents()));
  },
);
