// The description of a turn route (a conversation's or a channel's): SSE or one JSON body.
import { doc, type HeaderDoc, type ResponseDoc } from "./registry";
import { z } from "zod";
import { errorSchema, turnErrorResultSchema, turnResultSchema } from "./schemas";

/** A refusal before the turn runs is an Error; a turn refused or failed once queued is answered by turnJson. */
const refusedOrEnded = z.union([errorSchema, turnErrorResultSchema]);

const ANSWER =
  'With `Accept: text/event-stream` the answer streams TurnEvents as server-sent events (`event: <type>`, `data: <JSON>`); otherwise it is one JSON body once the turn ends or pauses (`stop_reason: "requires_action"`, `requires_action` listing the client tool calls to answer at /tool-results).';

/**
 * A JSON answer that carries the turn (turn-response.ts turnJson) names its conversation and, once
 * the turn ended, its timing; an SSE answer (a 200) names its conversation. Any answer of a turn
 * replayed for its Idempotency-Key says so (turns.ts respondTurn), whatever its status.
 */
const answerHeaders = (idempotent: boolean): Record<string, HeaderDoc> => ({
  "x-conversation-id": { shared: "ConversationId" },
  "server-timing": { shared: "ServerTiming" },
  ...(idempotent ? { "idempotent-replayed": { shared: "IdempotentReplayed" } } : {}),
});

/** What an Idempotency-Key adds: a key sent with another request is refused (Retry-After: see document.ts). */
const keyReused: Record<number, ResponseDoc> = {
  422: {
    description: "This Idempotency-Key came with another request (idempotency_key_reused); nothing ran. An Error.",
    schema: errorSchema,
  },
};

const KEY_IN_PROGRESS =
  ", or the request holding this Idempotency-Key has not finished (idempotency_in_progress, with Retry-After: an Error)";

export const turnDoc = (summary: string, opts: { idempotent: boolean; description?: string }) => {
  const turnHeaders = answerHeaders(opts.idempotent);
  return doc({
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
        headers: turnHeaders,
        content: { "text/event-stream": { schema: { $ref: "#/components/schemas/TurnEvent" } } },
      },
      400: {
        description:
          "Bad input (Error), or the settings' model cannot be used (model_unavailable: the turn with `error`)",
        schema: refusedOrEnded,
        headers: turnHeaders,
      },
      404: {
        description: "Not found (Error), or the conversation was deleted while the turn waited (the turn with `error`)",
        schema: refusedOrEnded,
        headers: turnHeaders,
      },
      409: {
        description: `A turn waits on client tool results (turn_paused), results were already posted (tool_results_conflict), or a regenerate is refused (nothing_to_regenerate, regenerate_folded, turn_in_progress): an Error, or the turn with \`error\` when refused after it was queued${opts.idempotent ? KEY_IN_PROGRESS : ""}`,
        schema: refusedOrEnded,
        headers: turnHeaders,
      },
      ...(opts.idempotent ? keyReused : {}),
      502: {
        description:
          "The model failed, or the turn stopped before it finished (turn_interrupted); what was saved is returned with `error`",
        schema: turnErrorResultSchema,
        headers: turnHeaders,
      },
      503: {
        description:
          "No model is configured (model_not_configured, an Error), or the model is unavailable for now (model_unavailable: the turn with `error`)",
        schema: refusedOrEnded,
        headers: turnHeaders,
      },
    },
    extensions: { "x-sse-events": { $ref: "#/components/schemas/TurnEvent" } },
  });
};
