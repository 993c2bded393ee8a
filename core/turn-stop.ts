// Stopping a running turn: the body of POST /v1/conversations/:id/stop and the websocket's `stop`
// frame. Without a turnId the turn running now is stopped; with one, only that turn (running or queued).
import { z } from "zod";

export const turnIdSchema = z
  .string()
  .regex(/^turn_[0-9A-HJKMNP-TV-Z]{26}$/, "must be a turn id (turn_ and 26 characters), as turn_start names it");

export const stopBodySchema = z
  .strictObject({
    turnId: turnIdSchema
      .optional()
      .describe("The turn to stop, running or queued; absent: the turn running now (never a queued one)."),
  })
  .meta({ id: "StopTurnBody", description: "Which turn to stop." });

export const stopAnswerSchema = z
  .looseObject({
    turnId: z
      .string()
      .nullable()
      .describe("The turn the stop applied to; null when none was named and none was running."),
    stopped: z
      .boolean()
      .describe(
        "True when the turn ended interrupted because of a stop (this request or an earlier one); false when it ended otherwise, is not known, or had not settled within the wait.",
      ),
  })
  .meta({ id: "StopTurnAnswer" });
