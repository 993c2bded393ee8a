// The description of a turn route (a conversation's or a channel's): SSE or one JSON body.
import { doc } from "./registry";
import { turnResultSchema } from "./schemas";

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
      502: { description: "The model failed; what was saved is returned with `error`", schema: turnResultSchema },
      409: {
        description:
          "A turn waits on client tool results (turn_paused), or results were already posted (tool_results_conflict)",
      },
      503: { description: "No model is configured (model_not_configured)" },
    },
    extensions: { "x-sse-events": { $ref: "#/components/schemas/TurnEvent" } },
  });
