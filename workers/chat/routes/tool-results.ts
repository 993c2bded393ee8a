// POST /v1/conversations/:id/tool-results: a client answers the client tool calls its paused turn
// waits on, and the same turn goes on, answered like a turn request (JSON, or SSE on request).
import { Hono } from "hono";
import { isId } from "../../../core/ids";
import { toolResultsBodySchema } from "../../../core/client-tools";
import { notFound } from "../errors";
import { idempotencyKeyHeader } from "../idempotency-header";
import { requireModel, respondTurn, turnEvents } from "../turns";
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
    const started = turnEvents(answer);
    if (started.kind === "missing") throw notFound("conversation");
    return respondTurn(c, { conversationId, events: started.events, replayed: started.replayed });
  },
);
