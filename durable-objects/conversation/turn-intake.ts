// Taking turns in: the idempotency claim, the ledger row that follows a keyed turn's events, the
// queueing in arrival order, and the NDJSON stream an HTTP caller reads.
import type { TurnEvent } from "../../core/events";
import { sortableId } from "../../core/ids";
import { requestFingerprint } from "../../core/idempotency-key";
import type { ClientToolSpec } from "../../core/client-tools";
import type { ContentBlock } from "../../core/types";
import type { ConversationRef } from "../../services/record/conversation-head";
import type { ConversationStore } from "./conversation-store";
import { keyedAnswer, type IdempotencyLedger, type KeyedAnswer } from "./idempotency";
import type { TurnOrder } from "./turn-order";
import type { TurnRunner } from "./turn-runner";
import { TurnStops } from "./turn-stops";

export interface TurnInput {
  content: ContentBlock[];
  /** Tools the turn's attached files need (their notes are already in `content`). */
  activate?: readonly string[];
  /** A retry with the same key gets the first turn's outcome instead of a second turn. */
  idempotencyKey?: string;
  /** Client tools defined for this turn only (core/client-tools.ts). */
  tools?: ClientToolSpec[];
  /** Set by the intake: aborted when the turn is stopped (turn-stops.ts). */
  signal?: AbortSignal;
}

export type TurnSink = (event: TurnEvent) => void;

const encoder = new TextEncoder();

export class TurnIntake {
  /** The running turn's stop (POST /stop, the `stop` frame). */
  readonly stops = new TurnStops();

  constructor(
    private readonly store: ConversationStore,
    private readonly idempotency: IdempotencyLedger,
    private readonly order: TurnOrder,
    private readonly runner: TurnRunner,
  ) {}

  /** Null when the turn may run (no key, or a new one, now taken); else what to answer instead. */
  async claimKey(input: TurnInput): Promise<KeyedAnswer | null> {
    const key = input.idempotencyKey;
    if (key === undefined) return null;
    // The content alone: attached files are already notes in it (`activate` follows from them).
    const claim = this.idempotency.claim(key, await requestFingerprint({ content: input.content }));
    return claim.kind === "new" ? null : keyedAnswer(claim, (from, to) => this.store.range(from, to));
  }

  /** Queues a claimed turn; its events as NDJSON. The turn runs to the end even if the reader leaves. */
  stream(ref: ConversationRef, input: TurnInput): ReadableStream<Uint8Array> {
    return ndjson((sink) => this.enqueue(ref, input, sink));
  }

  /** Frees a key claimed for a request that was then refused before running anything. */
  releaseKey(key: string | undefined): void {
    if (key !== undefined) this.idempotency.settle(key);
  }

  /** Queues the paused turn's continuation (its results are accepted); its events as NDJSON. */
  streamResume(ref: ConversationRef, idempotencyKey?: string): ReadableStream<Uint8Array> {
    return ndjson((sink) => this.enqueueResume(ref, sink, idempotencyKey));
  }

  /** The paused turn goes on in the turn chain, in order with every other turn; a keyed post's row follows its events. */
  enqueueResume(ref: ConversationRef, sink: TurnSink | null, key?: string): Promise<void> {
    const queuedAt = Date.now();
    const events = key === undefined ? sink : (e: TurnEvent) => (this.idempotency.record(key, e), sink?.(e));
    return this.order.turn(
      () => this.runner.resume(ref, events, queuedAt),
      () => this.releaseKey(key),
    );
  }

  /** Turns run one at a time in arrival order: each waits for the previous one to settle. */
  enqueue(ref: ConversationRef, input: TurnInput, sink: TurnSink | null, turnId = sortableId("turn")): Promise<void> {
    const queuedAt = Date.now();
    const key = input.idempotencyKey;
    // A keyed turn's row follows its events, so a retry (or a restarted object) knows what it did.
    const events = key === undefined ? sink : (e: TurnEvent) => (this.idempotency.record(key, e), sink?.(e));
    return this.order.turn(
      () => this.stops.run(turnId, (signal) => this.runner.run(ref, { ...input, signal }, events, queuedAt, turnId)),
      () => {
        if (key !== undefined) this.idempotency.settle(key);
      },
    );
  }
}

/** A turn's events as NDJSON bytes, the stream closed when the turn settles. */
function ndjson(start: (sink: TurnSink) => Promise<void>): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const sink = (event: TurnEvent) => {
    writer.write(encoder.encode(`${JSON.stringify(event)}\n`)).catch(() => {});
  };
  start(sink).finally(() => writer.close().catch(() => {}));
  return readable;
}
