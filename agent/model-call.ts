// One streamed model call: deltas and thinking to the caller as they arrive, the final message, or
// the error with whatever the stream had produced before it failed.
import Anthropic, { type Middleware } from "@anthropic-ai/sdk";
import type { TurnEvent } from "../core/events";
import { wellFormedDeep } from "../core/text-cut";
import type { ModelRequest } from "../core/types";

export type StreamedCall =
  | { ok: true; reply: Anthropic.Message }
  | { ok: false; error: unknown; partial: Anthropic.Message | undefined };

type Emit = (event: TurnEvent) => void;

/**
 * How long a streamed reply may send nothing at all before it counts as cut. The SDK's timeout
 * covers a call only until its headers; after them a stalled connection would hold the turn (and
 * the conversation's queue) until a Stop. The API sends `ping` events while a reply is being
 * worked on (streaming docs), and they count here, so long silent thinking is not cut: this bound
 * is generous on purpose.
 */
export const STREAM_IDLE_MS = 120_000;

/**
 * `signal` cancels the call (a stopped turn): it then fails with whatever it had produced.
 * `idleMs` (STREAM_IDLE_MS unless a test sets it): a body silent that long is aborted and fails as a
 * cut stream, retried as one. A cut, silence or `error` event after a message_delta with a
 * stop_reason, every content block stopped, is no failure: the reply is the snapshot, with that
 * stop_reason and usage (unless `signal` stopped the call).
 */
export async function streamCall(call: {
  client: Anthropic;
  request: ModelRequest;
  turnId: string;
  emit: Emit;
  signal?: AbortSignal;
  idleMs?: number;
}): Promise<StreamedCall> {
  const { client, request, turnId, emit, signal } = call;
  const idle = idleWatch(call.idleMs ?? STREAM_IDLE_MS, () => stream.abort());
  // A lone surrogate anywhere (a cut that split a character, a tool's output) is a 400 on this
  // request and on every later one that replays it: the request goes out well-formed instead.
  const stream = client.messages.stream(wellFormedDeep(request) as unknown as Anthropic.MessageStreamParams, {
    ...(signal ? { signal } : {}),
    middleware: [idle.middleware],
  });
  stream.on("text", (text) => emit({ type: "delta", turnId, text }));
  // The SDK drops its snapshot when the body ends: kept here for a stream cut before message_stop.
  let snapshot: Anthropic.Message | undefined;
  let stopped = false;
  // Whether the reply is whole without its message_stop: message_delta carries the final
  // stop_reason and cumulative usage and message_stop nothing more (streaming docs), so once it came
  // with every block closed, a cut loses nothing. A block started after it undoes that.
  const open = new Set<number>();
  let delivered = false;
  stream.on("streamEvent", (event, message) => {
    snapshot = message;
    if (event.type === "message_stop") stopped = true;
    else if (event.type === "message_delta") delivered = event.delta.stop_reason !== null;
    else if (event.type === "content_block_start") {
      open.add(event.index);
      delivered = false;
    } else if (event.type === "content_block_stop") open.delete(event.index);
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
    // A body that ended before message_stop with no error event (a gateway or the network cut it),
    // or one gone silent: the SDK's own complaint becomes the API error inside a stream it is, kept
    // and retried as one. A stop that came first stays a stop.
    const silent = idle.fired() && !signal?.aborted;
    const cut =
      silent || (!stopped && error instanceof Anthropic.AnthropicError && !(error instanceof Anthropic.APIError));
    // Any failure after a final message_delta with no block open, a cut or an `error` event where
    // message_stop should have been (the SDK raises that as an APIError): the reply is whole, and a
    // retry would pay for it again (and redo any server-tool work, a web search say). A stop is
    // still a stop: the turn ends on it.
    if (!signal?.aborted && delivered && open.size === 0 && snapshot) return { ok: true, reply: snapshot };
    const message = silent
      ? `the model API's stream sent no data for ${Math.round((call.idleMs ?? STREAM_IDLE_MS) / 1000)} s`
      : "the model API's stream ended before message_stop";
    return { ok: false, error: cut ? streamCut(message) : error, partial: stream.currentMessage ?? snapshot };
  } finally {
    idle.stop();
  }
}

/**
 * A per-request middleware timing the response body: every chunk (pings included, which the SDK
 * drops before its events) restarts the clock; `onIdle` runs once when `ms` pass without one.
 */
function idleWatch(ms: number, onIdle: () => void) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let fired = false;
  const stop = () => clearTimeout(timer);
  const arm = () => {
    stop();
    timer = setTimeout(() => {
      fired = true;
      onIdle();
    }, ms);
  };
  const middleware: Middleware = async (req, next) => {
    const res = await next(req);
    if (!res.body || !res.ok) return res;
    arm();
    const watched = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          arm();
          controller.enqueue(chunk);
        },
        flush: stop,
      }),
    );
    return new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { middleware, stop, fired: () => fired };
}

function streamCut(message: string): InstanceType<typeof Anthropic.APIError> {
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
