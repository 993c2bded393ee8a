// A scripted Messages stream for unit tests that drive the real SDK client over a fetch of their own:
// the SSE body of a list of events (https://platform.claude.com/docs/en/build-with-claude/streaming).
import { catalogEntry } from "../../core/models/lookup";

/** One stream event: its type and its data. */
export type SseEvent = [string, unknown];

/** An SSE body of these events, as the API answers a streamed call. */
export function sse(events: SseEvent[]): Response {
  const text = events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(text, { status: 200, headers: { "content-type": "text/event-stream", "request-id": "req_1" } });
}

/** The `message_start` of a reply by Claude Sonnet 5.5 to a prompt of `inputTokens`. */
export const messageStart = (inputTokens: number): SseEvent => [
  "message_start",
  {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: catalogEntry("claude-sonnet-5-5")!.id,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  },
];
