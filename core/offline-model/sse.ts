/**
 * Server-sent events in Anthropic's streaming format, delivered through a
 * pull-based ReadableStream so consumers receive many separate deltas, the
 * way a real model streams, rather than one buffered body.
 */
import { prng } from "./hash";
import type { ContentOut, StopReason } from "./generate";
import type { CacheUsage } from "./cache";

export interface MessageJson {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ContentOut[];
  stop_reason: StopReason;
  stop_sequence: null;
  usage: CacheUsage & { output_tokens: number };
}

interface SseEvent {
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

/** The exact event sequence of a streamed Messages response. */
export function messageEvents(message: MessageJson, seed: number): SseEvent[] {
  const { content, usage } = message;
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        // Like the real API: empty content, no stop reason yet, output_tokens counted so far.
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  content.forEach((block, index) => {
    const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
    events.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: start } });
    const pieces = block.type === "text" ? chunkText(block.text, seed + index) : chunkText(JSON.stringify(block.input), seed + index);
    for (const piece of pieces) {
      const delta = block.type === "text" ? { type: "text_delta", text: piece } : { type: "input_json_delta", partial_json: piece };
      events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta } });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: usage.output_tokens,
        },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return events;
}

/** One event per pull: the body is produced as it is read, not buffered up front. */
export function sseStream(events: readonly SseEvent[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next >= events.length) {
        controller.close();
        return;
      }
      const { event, data } = events[next++];
      controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
    },
  });
}
