// The description of a turn route (a conversation's or a channel's): SSE or one JSON body.
import { doc } from "./registry";
import { z } from "zod";
import { errorSchema, turnErrorResultSchema, turnResultSchema } from "./schemas";

/** A refusal before the turn runs is an Error; a turn refused or failed once queued is answered by turnJson. */
const refusedOrEnded = z.union([errorSchema, turnErrorResultSchema]);

const ANSWER =
  'With `Accept: text/event-stream` the answer streams TurnEvents as server-sent events (`event: <type>`, `data: <JSON>`); otherwise it is one JSON body once the turn ends or pauses (`stop_reason: "requires_action"`, `requires_action` listing the client tool calls to answer at /tool-results).';

export const turnDoc = (summary: string, opts: { idempotent: boolean; description?: string }) =>
  doc({
    summary,
    description: `${opts.description ?? "Runs one turn."} ${ANSWER}`,
    headers: opts.idempotent
      ? [
          {
            name: "Idempotency-Key",
            description: "Resend with the same key: the first outcome is answered again, never a second turn (24 h).",
          },
        ]
      : [],
    responses: {
      200: {
        description: "The turn",
        schema: turnResultSchema,
        content: { "text/event-stream": { schema: { $ref: "#/components/schemas/TurnEvent" } } },
      },
      400: {
        description:
          "Bad input (Error), or the settings' model cannot be used (model_unavailable: the turn with `error`)",
        schema: refusedOrEnded,
      },
      404: {
        description: "Not found (Error), or the conversation was deleted while the turn waited (the turn with `error`)",
        schema: refusedOrEnded,
      },
      409: {
        description:
          "A turn waits on client tool results (turn_paused), results were already posted (tool_results_conflict), or a regenerate is refused (nothing_to_regenerate, regenerate_folded, turn_in_progress): an Error, or the turn with `error` when refused after it was queued",
        schema: refusedOrEnded,
      },
      502: { description: "The model failed; what was saved is returned with `error`", schema: turnErrorResultSchema },
      503: {
        description:
          "No model is configured (model_not_configured, an Error), or the model is unavailable for now (model_unavailable: the turn with `error`)",
        schema: refusedOrEnded,
      },
    },
    extensions: { "x-sse-events": { $ref: "#/components/schemas/TurnEvent" } },
  });
