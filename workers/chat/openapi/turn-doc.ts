// The description of a turn route (a conversation's or a channel's): SSE or one JSON body.
import { doc } from "./registry";
import { turnResultSchema } from "./schemas";

export const turnDoc = (summary: string, opts: { idempotent: boolean }) =>
  doc({
    summary,
    description:
      "Runs one turn. With `Accept: text/event-stream` the answer streams TurnEvents as server-sent events (`event: <type>`, `data: <JSON>`); otherwise it is one JSON body once the turn ends.",
    headers: opts.idempotent ? [{ name: "Idempotency-Key", description: "Resend with the same key: the first outcome is answered again, never a second turn (24 h)." }] : [],
    responses: {
      200: { description: "The turn", schema: turnResultSchema, content: { "text/event-stream": { schema: { $ref: "#/components/schemas/TurnEvent" } } } },
      502: { description: "The model failed; what was saved is returned with `error`", schema: turnResultSchema },
      503: { description: "No model is configured (model_not_configured)" },
    },
    extensions: { "x-sse-events": { $ref: "#/components/schemas/TurnEvent" } },
  });
