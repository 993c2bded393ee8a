/**
 * Server-sent events in Anthropic's streaming format
 * (https://platform.claude.com/docs/en/build-with-claude/streaming), delivered through a pull-based
 * ReadableStream so consumers receive many separate deltas, the way a real model streams, rather
 * than one buffered body. Per block:
 *
 * - text: start `{type:"text", text:""}`, any `citations_delta`, then `text_delta`s;
 * - thinking: start `{type:"thinking", thinking:"", signature:""}`, `thinking_delta`s (none when the
 *   text is omitted), one `signature_delta`;
 * - redacted_thinking and server tool results: start with the whole block, no deltas;
 * - tool_use / server_tool_use: start with `input: {}`, then `input_json_delta`s of the input's
 *   JSON text (of a call cut at max_tokens, the text up to the cut: the fragments stop mid-JSON).
 *
 * A stream error (`@stream-error`) cuts the stream after about N characters of text with an
 * `error` event (https://platform.claude.com/docs/en/api/errors: errors after a 200 arrive as SSE).
 * A hold (`@hold-stream`) stops sending after about N characters of text until the reader cancels
 * the body, as a client stopping a turn does, or until HOLD_MS pass. A pace (`@stream-pace`) sends
 * each text delta that many milliseconds after the event before it.
 */
import type { CacheUsage } from "./cache";
import { inputJsonText } from "./cut-call";
import type { StopDetails, StopReason } from "./generate";
import { prng } from "./hash";
import type { WireBlock } from "./wire";

export interface MessageUsage extends CacheUsage {
  output_tokens: number;
  output_tokens_details: { thinking_tokens: number };
  /** The server tools' requests, null when none ran (the SDK's Usage: a required key, possibly null). */
  server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null;
  /** "standard": the offline model has no priority tier and no batch path. */
  service_tier: "standard";
  /** "fast" when the request asked for `speed: "fast"` and the model took it, else "standard". */
  speed: "standard" | "fast";
  /** Where inference ran ("global", "us"; "not_available" on a model without inference_geo): in message_start when streamed. */
  inference_geo: string;
}

export interface MessageJson {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: WireBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  stop_details: StopDetails | null;
  usage: MessageUsage;
  /** The SDK's Message keys, required though null: the offline model runs no container tool. */
  container: null;
  /** Null: no prompt-cache divergence report is made (nor would one be without `diagnostics` asked). */
  diagnostics: null;
}

export interface SseEvent {
  event: string;
  data: unknown;
}

const MIN_CHUNK = 20;
const MAX_CHUNK = 40;

/** Split into 20–40 character pieces with sizes drawn from a seeded PRNG (never inside a surrogate pair). */
export function chunkText(text: string, seed: number): string[] {
  const random = prng(seed);
  const chunks: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + MIN_CHUNK + Math.floor(random() * (MAX_CHUNK - MIN_CHUNK + 1)));
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end += 1;
    chunks.push(text.slice(i, end));
    i = end;
  }
  return chunks;
}

function blockEvents(block: WireBlock, index: number, seed: number): { start: SseEvent; deltas: SseEvent[] } {
  const start = (content_block: unknown): SseEvent => ({
    event: "content_block_start",
    data: { type: "content_block_start", index, content_block },
  });
  const delta = (d: unknown): SseEvent => ({
    event: "content_block_delta",
    data: { type: "content_block_delta", index, delta: d },
  });
  switch (block.type) {
    case "text": {
      const citations = Array.isArray(block.citations)
        ? (block.citations as unknown[]).map((citation) => delta({ type: "citations_delta", citation }))
        : [];
      return {
        start: start({ type: "text", text: "" }),
        deltas: [
          ...citations,
          ...chunkText(String(block.text), seed).map((text) => delta({ type: "text_delta", text })),
        ],
      };
    }
    case "thinking": {
      const pieces = chunkText(String(block.thinking), seed).map((thinking) =>
        delta({ type: "thinking_delta", thinking }),
      );
      return {
        start: start({ type: "thinking", thinking: "", signature: "" }),
        deltas: [...pieces, delta({ type: "signature_delta", signature: block.signature })],
      };
    }
    case "tool_use":
    case "server_tool_use":
      return {
        start: start({ ...block, input: {} }),
        deltas: chunkText(inputJsonText(block), seed).map((partial_json) =>
          delta({ type: "input_json_delta", partial_json }),
        ),
      };
    default:
      return { start: start(block), deltas: [] };
  }
}

export interface StreamFailure {
  type: "overloaded_error" | "api_error";
  message: string;
  /** Characters of text to send before the error. */
  after: number;
}

/** Not an event on the wire: where the stream holds (sseStream waits there). */
export const HOLD_EVENT = "hold";
/** How long a held stream waits for its reader to cancel before it goes on. */
export const HOLD_MS = 5 * 60_000;

/**
 * The exact event sequence of a streamed Messages response (cut by an error event when `failure`
 * is given; with a hold marker after about `holdAfter` characters of text).
 */
export function messageEvents(
  message: MessageJson,
  {
    seed,
    failure = null,
    holdAfter = null,
  }: { seed: number; failure?: StreamFailure | null; holdAfter?: number | null },
): SseEvent[] {
  const { content, usage } = message;
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        // Like the real API: empty content, no stop reason or stop sequence yet (message_delta
        // carries them), output_tokens counted so far.
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          stop_details: null,
          usage: {
            ...usage,
            output_tokens: 1,
            output_tokens_details: null,
            server_tool_use: usage.server_tool_use ? { web_search_requests: 0, web_fetch_requests: 0 } : null,
          },
        },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  let sent = 0;
  let held = holdAfter === null;
  const error = (f: StreamFailure): SseEvent => ({
    event: "error",
    data: { type: "error", error: { type: f.type, message: f.message } },
  });
  for (const [index, block] of content.entries()) {
    const { start, deltas } = blockEvents(block, index, seed + index);
    events.push(start);
    for (const delta of deltas) {
      const d = (delta.data as { delta: { type: string; text?: string } }).delta;
      if (d.type === "text_delta") {
        if (failure && sent >= failure.after) return [...events, error(failure)];
        if (!held && sent >= holdAfter!) {
          held = true;
          events.push({ event: HOLD_EVENT, data: null });
        }
        sent += d.text!.length;
      }
      events.push(delta);
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  }
  if (failure) return [...events, error(failure)];
  if (!held) events.push({ event: HOLD_EVENT, data: null });
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: {
          stop_reason: message.stop_reason,
          stop_sequence: message.stop_sequence,
          stop_details: message.stop_details,
        },
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: usage.output_tokens,
          output_tokens_details: usage.output_tokens_details,
          server_tool_use: usage.server_tool_use,
        },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return events;
}

const isTextDelta = (e: SseEvent) =>
  e.event === "content_block_delta" && (e.data as { delta: { type: string } }).delta.type === "text_delta";

/**
 * One event per pull: the body is produced as it is read, not buffered up front; with `paceMs`
 * (`@stream-pace`) each text delta comes that long after the event before it.
 */
export function sseStream(
  events: readonly SseEvent[],
  { paceMs = 0 }: { paceMs?: number } = {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  let release: (() => void) | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next < events.length && events[next].event === HOLD_EVENT) {
        next++;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, HOLD_MS);
          release = () => (clearTimeout(timer), resolve());
        });
        release = null;
      }
      if (paceMs && next < events.length && isTextDelta(events[next]))
        await new Promise((resolve) => setTimeout(resolve, paceMs));
      // Also after a wait: a cancel while it waited ends the body.
      if (next >= events.length) {
        controller.close();
        return;
      }
      const { event, data } = events[next++];
      controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
    },
    cancel() {
      next = events.length;
      (release as (() => void) | null)?.();
    },
  });
}
