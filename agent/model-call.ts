// One streamed model call: deltas and thinking to the caller as they arrive, the final message, or
// the error with whatever the stream had produced before it failed.
import Anthropic from "@anthropic-ai/sdk";
import type { TurnEvent } from "../core/events";
import { wellFormedDeep } from "../core/text-cut";
import type { ModelRequest } from "../core/types";

export type StreamedCall =
  | { ok: true; reply: Anthropic.Message }
  | { ok: false; error: unknown; partial: Anthropic.Message | undefined };

type Emit = (event: TurnEvent) => void;

/** `signal` cancels the call (a stopped turn): it then fails with whatever it had produced. */
export async function streamCall(call: {
  client: Anthropic;
  request: ModelRequest;
  turnId: string;
  emit: Emit;
  signal?: AbortSignal;
}): Promise<StreamedCall> {
  const { client, request, turnId, emit, signal } = call;
  // A lone surrogate anywhere (a cut that split a character, a tool's output) is a 400 on this
  // request and on every later one that replays it: the request goes out well-formed instead.
  const stream = client.messages.stream(
    wellFormedDeep(request) as unknown as Anthropic.MessageStreamParams,
    signal ? { signal } : undefined,
  );
  stream.on("text", (text) => emit({ type: "delta", turnId, text }));
  // The SDK drops its snapshot when the body ends: kept here for a stream cut before message_stop.
  let snapshot: Anthropic.Message | undefined;
  let stopped = false;
  stream.on("streamEvent", (event, message) => {
    snapshot = message;
    if (event.type === "message_stop") stopped = true;
    if (
      event.type === "content_block_start" &&
      (event.content_block.type === "thinking" || event.content_block.type === "redacted_thinking")
    ) {
      // An empty delta opens the block: under display "omitted" it is all a client sees of it.
      emit({
        type: "thinking",
        turnId,
        block: event.index,
        text: "",
        ...(event.content_block.type === "redacted_thinking" ? { redacted: true as const } : {}),
      });
    } else if (event.type === "content_block_delta" && event.delta.type === "thinking_delta" && event.delta.thinking) {
      emit({ type: "thinking", turnId, block: event.index, text: event.delta.thinking });
    }
  });
  try {
    return { ok: true, reply: await stream.finalMessage() };
  } catch (error) {
    // A body that ended before message_stop with no error event (a gateway or the network cut it):
    // the SDK's own complaint becomes the API error inside a stream it is, kept and retried as one.
    const cut = !stopped && error instanceof Anthropic.AnthropicError && !(error instanceof Anthropic.APIError);
    return { ok: false, error: cut ? streamCut() : error, partial: stream.currentMessage ?? snapshot };
  }
}

function streamCut(): InstanceType<typeof Anthropic.APIError> {
  const message = "the model API's stream ended before message_stop";
  return new Anthropic.APIError(
    undefined,
    { type: "error", error: { type: "api_error", message } },
    message,
    undefined,
  );
}

/** The SDK's own backoff for retried requests: 0.5 s doubling to at most 8 s, less up to a quarter of jitter. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(500 * 2 ** attempt, 8_000);
  return Math.round(base * (1 - random() * 0.25));
}
