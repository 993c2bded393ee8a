// POST /v1/conversations/:id/stop: ends the running turn as "interrupted", keeping what it streamed
// (or cancels a queued one). Answers once the turn has settled, so the saved reply is in the transcript by then.
import { Hono } from "hono";
import { isId } from "../../../core/ids";
import { stopAnswerSchema, stopBodySchema } from "../../../core/turn-stop";
import { notFound } from "../errors";
import { doc } from "../openapi/registry";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";

export const turnStopRoutes = new Hono<AppEnv>();

turnStopRoutes.post(
  "/",
  doc({
    summary: "Stop the running turn (saved as interrupted), or cancel a queued one",
    description:
      'Cancels the model call under way and ends the turn with `stop_reason: "interrupted"`; the text streamed so far is saved as the reply (`stopReason: "interrupted"`), tool calls not yet run are answered as interrupted, and no further step starts. A tool already running finishes first. A paused turn\'s continuation (after `/tool-results`) is stopped the same way. A `turnId` naming a turn still queued behind another (`turn_queued` names it) cancels it: it ends `interrupted` at once, never runs and saves nothing. Without a `turnId` only the running turn is stopped. `stopped` is true only when the turn ended `interrupted` because of a stop (repeated stops answer it again); false when it ended otherwise, is not known, or had not settled within 15 s.',
    responses: { 200: { description: "Whether the turn was stopped", schema: stopAnswerSchema } },
  }),
  ...jsonBody(stopBodySchema),
  async (c) => {
    const conversationId = c.req.param("id") ?? "";
    if (!isId("conv", conversationId)) throw notFound("conversation");
    const stub = c.env.CONVERSATION.get(c.env.CONVERSATION.idFromName(conversationId));
    const answer = await stub.stopTurn({ tenantId: c.get("tenantId"), conversationId }, c.req.valid("json").turnId);
    if (!answer) throw notFound("conversation");
    return c.json(answer);
  },
);
