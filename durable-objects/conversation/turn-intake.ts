// Taking turns in: the idempotency claim, the ledger row that follows a keyed turn's events, the
// queueing in arrival order, and the NDJSON stream an HTTP caller reads.
import { encodeEvent, type TurnEvent } from "../../core/events";
import { sortableId } from "../../core/ids";
import { zeroUsage } from "../../core/types";
import { requestFingerprint } from "../../core/idempotency-key";
import type { ConversationRef } from "../../services/record/conversation-head";
import type { ConversationStore } from "./conversation-store";
import { keyedAnswer, type IdempotencyLedger, type KeyedAnswer } from "./idempotency";
import type { TurnOrder } from "./turn-order";
import type { TurnRunner } from "./turn-runner";
import type { TurnInput, TurnSink } from "./turn-input";
import { TurnStops, type StopAnswer, type TurnSlot } from "./turn-stops";
import type { PausedTurns } from "./paused-turn";
import { markReplaced, regenerateState, regenerateTarget, type RegenerateRefusal } from "./regenerate";
import type { ReplayCache } from "./replay-cache";
import type { ConversationHead } from "../../services/record/conversation-head";

export type { TurnInput, TurnSink } from "./turn-input";

const encoder = new TextEncoder();

export class TurnIntake {
  /** The running turn's stop (POST /stop, the `stop` frame). */
  readonly stops = new TurnStops();
  private readonly endings = new TurnEndings();

  constructor(
    private readonly store: ConversationStore,
    private readonly idempotency: IdempotencyLedger,
    private readonly order: TurnOrder,
    private readonly runner: TurnRunner,
    private readonly replay: { cache: ReplayCache; head: () => ConversationHead | undefined },
  ) {}

  /**
   * Why a regenerate cannot be taken now (a turn in flight, no reply to replace, the exchange
   * folded or being folded); null for any other turn, or when it may run. Synchronous, so the
   * caller can queue the turn before anything else comes in; the runner checks again.
   */
  regenerateRefusal(input: TurnInput): RegenerateRefusal | null {
    const head = this.replay.head();
    if (!input.regenerate || !head) return null;
    const target = regenerateTarget(
      head,
      this.replay.cache.replaySource(head),
      regenerateState(this.store, this.order.turnsInFlight),
    );
    return target.kind === "refused" ? target.refusal : null;
  }

  /** `new` when the turn may run (no key, or a new one, now taken); else what to answer instead. */
  async claimKey(input: TurnInput): Promise<{ kind: "new" } | KeyedAnswer> {
    const key = input.idempotencyKey;
    if (key === undefined) return { kind: "new" };
    // The content and the turn's own tools (they change what it may do): attached files are
    // already notes in the content (`activate` follows from them). No tools, no field, so keys
    // claimed before tools counted keep their fingerprint.
    const claim = this.idempotency.claim(
      key,
      await requestFingerprint({
        content: input.content,
        ...(input.regenerate ? { regenerate: true } : {}),
        ...(input.tools?.length ? { tools: input.tools } : {}),
      }),
    );
    if (claim.kind === "new") return claim;
    // The messages as the transcript shows them now: one a later regenerate replaced is marked so.
    const head = this.replay.head();
    return keyedAnswer(claim, (from, to) =>
      head ? markReplaced(head, this.store.range(from, to)) : this.store.range(from, to),
    );
  }

  /** Queues a claimed turn; its events as NDJSON. The turn runs to the end even if the reader leaves. */
  stream(ref: ConversationRef, input: TurnInput): ReadableStream<Uint8Array> {
    return ndjson((sink) => this.enqueue({ ref, input, sink }));
  }

  /** Frees a key claimed for a request that was then refused before running anything. */
  releaseKey(key: string | undefined): void {
    if (key !== undefined) this.idempotency.settle(key);
  }

  /** Queues the paused turn's continuation (its results are accepted); its events as NDJSON. */
  streamResume(ref: ConversationRef, turnId: string, idempotencyKey?: string): ReadableStream<Uint8Array> {
    return ndjson((sink) => this.enqueueResume({ ref, turnId, sink, key: idempotencyKey }));
  }

  /**
   * The paused turn `turnId` goes on in the turn chain, in order with every other turn; a keyed
   * post's row follows its events. It can be stopped like a fresh turn, queued or running.
   */
  enqueueResume(turn: {
    ref: ConversationRef;
    turnId: string;
    sink: TurnSink | null;
    key?: string | undefined;
    /** A stop ended the wait: the pending calls are closed as interrupted (TurnRunner.resume). */
    abandon?: boolean;
  }): Promise<void> {
    const { ref, turnId, sink, key, abandon } = turn;
    const queuedAt = Date.now();
    const events = this.keyed(key, sink, turnId);
    const slot = this.stops.enter(turnId);
    return this.order.turn(
      () =>
        this.stoppable(slot, events, async (signal, observed) => {
          const waited = await this.runner.resume({ ref, turnId, sink: observed, queuedAt, signal, abandon });
          // The turn no longer waits (a stop, or an earlier continuation, ended it): a post's caller
          // waits on these events, and silence would read as the object restarting.
          if (waited === false && events) this.endings.tell(observed, { turnId, queuedAt });
        }),
      () => this.releaseKey(key),
    ).result;
  }

  /**
   * A stop (POST /stop, the `stop` frame): the running or queued turn (turn-stops.ts), or else the
   * turn paused on client tools, named or not: its calls are closed as interrupted and it ends
   * "interrupted" without another model call, so the conversation takes turns again at once.
   */
  async stop(
    ref: ConversationRef,
    on: { turnId?: string | undefined; paused: Pick<PausedTurns, "get" | "close" | "reopen"> },
  ): Promise<StopAnswer> {
    const answer = await this.stops.stop(on.turnId);
    if (answer.stopped || (on.turnId === undefined && answer.turnId !== null)) return answer;
    // Closed in order with the posts of results: one checked after this is refused (409), and one
    // taken before it has its continuation queued, which is stopped like any queued continuation.
    const waiting = await on.paused.close(on.turnId);
    if (!waiting) return answer;
    if (waiting.answers && this.stops.has(waiting.turnId)) return this.stops.stop(waiting.turnId);
    let ended = false;
    try {
      await this.enqueueResume({ ref, turnId: waiting.turnId, sink: null, abandon: true });
      ended = (await on.paused.get())?.turnId !== waiting.turnId;
    } finally {
      // Not ended (its save failed): the turn still waits, and results may be posted again.
      if (!ended) on.paused.reopen(waiting.turnId);
    }
    if (ended) this.stops.remember(waiting.turnId);
    return { turnId: waiting.turnId, stopped: ended };
  }

  /**
   * Turns run one at a time in arrival order: each waits for the previous one to settle. A turn
   * stopped while it waits ends at once (see turn-stops.ts): its caller hears `turn_end
   * {stop_reason: "interrupted"}` and it never runs.
   */
  enqueue(turn: { ref: ConversationRef; input: TurnInput; sink: TurnSink | null; turnId?: string }): Promise<void> {
    const { ref, input, sink, turnId = sortableId("turn") } = turn;
    const queuedAt = Date.now();
    const key = input.idempotencyKey;
    // A keyed turn's row follows its events, so a retry (or a restarted object) knows what it did.
    const events = this.keyed(key, sink, turnId);
    let cancelled!: () => void;
    const ended = new Promise<void>((resolve) => (cancelled = resolve));
    const ahead = this.order.turnsInFlight;
    // A turn cancelled while it waits no longer counts as ahead of later turns.
    let leave = () => {};
    const slot = this.stops.enter(turnId, () => {
      leave();
      this.runner.cancelled({ ref, sink: events, queuedAt, turnId });
      this.releaseKey(key);
      cancelled();
    });
    const queued = this.order.turn(
      () =>
        this.stoppable(slot, events, (signal, observed) =>
          this.runner.run({ ref, input: { ...input, signal }, sink: observed, queuedAt, turnId }),
        ),
      () => {
        // A turn cancelled while queued released its key then (a retry may have claimed it since).
        if (!slot.controller.signal.aborted || slot.running) this.releaseKey(key);
      },
    );
    leave = queued.leave;
    if (ahead > 0) this.runner.queued(events, turnId, ahead);
    return Promise.race([queued.result, ended]);
  }

  /**
   * The sink of a turn being queued: a keyed one's row names the turn at once (a repeat of the key
   * while it waits or starts is told it) and then follows its events.
   */
  private keyed(key: string | undefined, sink: TurnSink | null, turnId: string): TurnSink | null {
    if (key === undefined) return sink;
    this.idempotency.name(key, turnId);
    return (e: TurnEvent) => (this.idempotency.record(key, e), sink?.(e));
  }

  /** Runs a turn under its slot's stop, telling the slot how the turn ended. */
  private stoppable(
    slot: TurnSlot,
    sink: TurnSink | null,
    turn: (signal: AbortSignal, sink: TurnSink) => Promise<void>,
  ): Promise<void> {
    return this.stops.run(slot, async (signal) => {
      let ending: string | undefined;
      await turn(signal, (e) => {
        if (e.type === "turn_end" && e.turnId === slot.turnId) ending = this.endings.keep(slot.turnId, e.stop_reason);
        sink?.(e);
      });
      return ending;
    });
  }
}

/** How many turns' endings are kept, for a continuation that finds its turn already ended. */
const ENDINGS_KEPT = 64;

/**
 * How recent turns ended (their `turn_end`'s stop reason): a continuation queued for a turn that no
 * longer waits (a stop, or an earlier continuation, ended it first) tells its caller how it ended.
 */
class TurnEndings {
  private readonly kept = new Map<string, string>();

  keep(turnId: string, stopReason: string): string {
    this.kept.delete(turnId);
    this.kept.set(turnId, stopReason);
    const oldest = this.kept.keys().next();
    if (this.kept.size > ENDINGS_KEPT && !oldest.done) this.kept.delete(oldest.value);
    return stopReason;
  }

  /** The turn's end again, for a caller that did not hear it (an unknown one, after a restart: an error). */
  tell(sink: TurnSink, turn: { turnId: string; queuedAt: number }): void {
    const { turnId, queuedAt } = turn;
    const ending = this.kept.get(turnId);
    sink({ type: "turn_start", turnId });
    if (ending === undefined) {
      const message = `turn ${turnId} no longer waits for client tool results: it ended before these could be saved; read the transcript`;
      sink({ type: "error", turnId, error: { type: "tool_results_conflict", message, status: 409 } });
    }
    const timing = { serverMs: 0, modelMs: 0, queuedMs: Date.now() - queuedAt };
    sink({ type: "turn_end", turnId, stop_reason: ending ?? "error", usage: zeroUsage(), timing });
  }
}

/**
 * What one caller's NDJSON stream may hold unread (its reader slow, or stalled): an event that comes
 * while more than this waits ends that stream with an error `turn_interrupted` (the worker adds the
 * `turn_end`), and the turn runs on; its outcome stays in the transcript and its Idempotency-Key.
 */
export const CALLER_UNREAD_BYTES = 16 * 1024 * 1024;

/**
 * A turn's events as NDJSON bytes, the stream closed when the turn settles. The turn never waits on
 * the reader: what it has not read yet is queued, up to CALLER_UNREAD_BYTES.
 */
export function ndjson(start: (sink: TurnSink) => Promise<void>): ReadableStream<Uint8Array> {
  let out!: ReadableStreamDefaultController<Uint8Array>;
  // The reader left, was cut off, or heard the turn out: nothing more is written.
  let over = false;
  let turnId: string | undefined;
  const readable = new ReadableStream<Uint8Array>(
    {
      start: (controller) => {
        out = controller;
      },
      cancel: () => {
        over = true;
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: CALLER_UNREAD_BYTES }),
  );
  const end = () => {
    if (over) return;
    over = true;
    out.close();
  };
  const sink = (event: TurnEvent) => {
    if (over) return;
    if (event.type === "turn_start" || event.type === "turn_queued") turnId = event.turnId;
    if ((out.desiredSize ?? 0) > 0) return out.enqueue(encoder.encode(encodeEvent(event)));
    const message = `this stream fell more than ${CALLER_UNREAD_BYTES / 1024 / 1024} MiB of events behind the turn and was cut off; the turn runs on: read the transcript, or send it again with the same Idempotency-Key to learn its outcome`;
    const error = { type: "turn_interrupted", message };
    out.enqueue(encoder.encode(encodeEvent({ type: "error", ...(turnId ? { turnId } : {}), error })));
    end();
  };
  start(sink)
    .catch((err) => console.error("a turn threw past its guards", err))
    .finally(end);
  return readable;
}
