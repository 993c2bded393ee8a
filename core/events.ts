// A turn's events, the one place they are defined and encoded: the conversation object writes them
// as NDJSON (encodeEvent), the chat worker reads them back (decodeEvents) and answers them as SSE
// (toSse) or websocket frames (JSON). Every event with its payload is in TurnEvent; the naming
// rule and the aliases kept for clients are in docs/api-notes.md ("Event names").
import type { StoredMessage, Usage } from "./types";

/** Which sub-agent of the turn an event comes from (workflow mode); absent: the master agent. */
export interface EventAgent {
  segment: string;
  name: string;
}

/** A sub-agent's loop emits the same events as the master's, each tagged with `agent`. */
export type TurnEvent =
  /**
   * `replayed`: the first outcome of an Idempotency-Key answered again; no turn ran. `resumed`: sent
   * to a socket resuming with `?after=` while the turn runs, followed by what it streamed since its
   * last saved message.
   */
  (
    | { type: "turn_start"; turnId: string; replayed?: true; resumed?: true }
    /**
     * The turn waits behind `ahead` turns queued or running: until it starts, a stop naming `turnId`
     * cancels it. `resumed`: sent again to a socket resuming with `?after=` while the turn still waits.
     */
    | { type: "turn_queued"; turnId: string; ahead: number; resumed?: true }
    | { type: "delta"; turnId: string; text: string }
    /**
     * The model's thinking, streamed as it comes: `block` groups the deltas of one thinking block (its
     * index in the reply); an empty `text` opens a block (all a client sees under display "omitted");
     * `redacted` marks reasoning the API returned encrypted.
     */
    | { type: "thinking"; turnId: string; block: number; text: string; redacted?: true }
    | { type: "tool_use"; turnId: string; id: string; name: string; input: unknown }
    | {
        type: "tool_result";
        turnId: string;
        tool_use_id: string;
        name: string;
        is_error: boolean;
        chars: number;
        preview: string;
      }
    | { type: "progress"; turnId: string; message: string }
    | { type: "message"; turnId: string; message: StoredMessage }
    | { type: "compaction_started"; turnId: string; tokens: number; budgetTokens: number; forced: boolean }
    /** The compaction card; sent under its contract name `compaction`, then again as `compaction_finished` (EVENT_ALIASES). */
    | ({ type: "compaction" } & CompactionCard)
    | ({ type: "compaction_finished" } & CompactionCard)
    | {
        type: "turn_end";
        turnId: string;
        stop_reason: string;
        usage: Usage;
        timing: { serverMs: number; modelMs: number; queuedMs: number };
        /**
         * Where the D1 writes the turn made for its caller before its reply reached (its notes), when
         * it made any: a JSON answer's x-d1-bookmark covers it; an SSE or websocket client, whose
         * headers came before the turn, sends back the later of it and the header (docs/api-notes.md).
         */
        d1Bookmark?: string;
      }
    /**
     * A model failure (agent/model-errors.ts) also names the provider's error type and request id,
     * and an overflow the provider's count and real maximum: support and clients sizing a retry need them.
     */
    | {
        type: "error";
        turnId?: string;
        error: {
          type: string;
          message: string;
          status?: number;
          providerType?: string;
          requestId?: string;
          overflow?: { promptTokens: number; maxTokens: number };
        };
      }
    /** The model declined to answer: nothing of the refused turn is replayed to it again; `fallbackModel` answers instead when the settings name one. */
    | {
        type: "refusal";
        turnId: string;
        model: string;
        category: string | null;
        explanation: string | null;
        fallbackModel?: string;
      }
    /** The turn runs on another model than the settings named: `retired` (the settings move with it) or `refusal_fallback` (this turn only). */
    | {
        type: "model_changed";
        turnId: string;
        from: string;
        to: string;
        reason: "retired" | "refusal_fallback";
        retiredOn?: string;
      }
    /** A streamed reply failed mid-way (overloaded, internal error) and is asked again after `delayMs`; text already streamed is kept. */
    | { type: "retry"; turnId: string; attempt: number; delayMs: number; error: { type: string; message: string } }
    /**
     * A regenerate replaced the last exchange: the messages `fromSeq`..`toSeq` are superseded by the
     * exchange whose user message is `supersededBy` (kept in the transcript, never replayed again).
     */
    | {
        type: "exchange_superseded";
        turnId: string;
        fromSeq: number;
        toSeq: number;
        messageIds: string[];
        supersededBy: string;
      }
    /** The turn paused on client tools: post their results to /tool-results before `expiresAt`. */
    | {
        type: "requires_action";
        turnId: string;
        calls: { id: string; name: string; input: unknown }[];
        expiresAt: string;
      }
  ) & { agent?: EventAgent };

/** What a finished compaction pass did (the `compaction` / `compaction_finished` card). */
export interface CompactionCard {
  turnId: string;
  forced: boolean;
  targets: number;
  tokensBefore: number;
  tokensAfter: number;
  tokensSaved: number;
  durationMs: number;
  summarized: "model" | "fallback";
  details: { index: number; block: number; kind: string; before: number; after: number }[];
}

export type TurnEventType = TurnEvent["type"];

/** Every event name; the record makes the compiler refuse a TurnEvent left out. */
const EVENT_TYPE_SET: Record<TurnEventType, true> = {
  turn_start: true,
  turn_queued: true,
  exchange_superseded: true,
  delta: true,
  thinking: true,
  tool_use: true,
  tool_result: true,
  progress: true,
  message: true,
  compaction_started: true,
  compaction: true,
  compaction_finished: true,
  turn_end: true,
  error: true,
  refusal: true,
  model_changed: true,
  retry: true,
  requires_action: true,
};
export const EVENT_TYPES = Object.keys(EVENT_TYPE_SET) as TurnEventType[];

/**
 * Contract names that break the naming rule, each sent as it always was and followed at once by the
 * same event under the rule's name (docs/api-notes.md, "Event names"). Old name -> rule's name.
 */
export const EVENT_ALIASES = { compaction: "compaction_finished" } as const satisfies Partial<
  Record<TurnEventType, TurnEventType>
>;

/** An event as clients receive it: itself, then its rule-named twin when its own name is a kept alias. */
export function withAliases(event: TurnEvent): TurnEvent[] {
  return event.type === "compaction" ? [event, { ...event, type: EVENT_ALIASES.compaction }] : [event];
}

/** One event as an NDJSON line (the conversation object's answer to the worker). */
export function encodeEvent(event: TurnEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/** One NDJSON line back into its event; a line that is not one of the events throws, naming it. */
export function decodeEvent(line: string): TurnEvent {
  const event = JSON.parse(line) as { type?: unknown };
  if (typeof event !== "object" || event === null || !(EVENT_TYPES as unknown[]).includes(event.type))
    throw new Error(`not a turn event: ${line.slice(0, 200)}`);
  return event as TurnEvent;
}

/** NDJSON bytes (encodeEvent's lines) into events. */
export function decodeEvents(): TransformStream<Uint8Array, TurnEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim()) controller.enqueue(decodeEvent(line));
      }
    },
    flush(controller) {
      if (buffer.trim()) controller.enqueue(decodeEvent(buffer));
    },
  });
}

/** One event as an SSE message: the event name is its type. */
export function toSse(event: TurnEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
