// Stopping a turn (POST /stop, the websocket's `stop` frame). Every turn, fresh or a paused turn's
// continuation, enters here when it is queued and holds an AbortController until it settles:
// - a stop of the running turn aborts it and waits for it to settle, so what it streamed is saved
//   (as "interrupted") before the caller hears back;
// - a stop of a fresh turn still queued behind another cancels it at once: it ends "interrupted"
//   without running (no model call, nothing saved) and is skipped when its place comes;
// - a stop of a queued continuation aborts it too: when its place comes it saves the client's
//   results (a tool call is never left unanswered) and ends "interrupted" with no model call;
// - a turn paused on client tools holds no slot: TurnIntake.stop ends it (its calls answered as
//   interrupted) when no slot answers the stop.
// `stopped: true` means the turn really ended "interrupted" because of a stop: a turn that ended
// otherwise (it had finished its last step, it failed) or has not settled within STOP_WAIT_MS
// answers false. Stops are idempotent: a stopped turn answers `stopped: true` again.

/** How many stopped turn ids are remembered, so a repeated stop answers as the first did. */
const REMEMBERED = 64;
/** A stop waits at most this long for the turn to settle (a tool already running finishes first). */
export const STOP_WAIT_MS = 15_000;
/** The stop reason a stopped turn ends with. */
const INTERRUPTED = "interrupted";

export interface StopAnswer {
  /** The turn the stop applies to; null when none was named and none is running. */
  turnId: string | null;
  /** True when the turn ended "interrupted" because of a stop (this one or an earlier one). */
  stopped: boolean;
}

/** A turn from the moment it is queued until it settles. */
export interface TurnSlot {
  readonly turnId: string;
  readonly controller: AbortController;
  readonly settled: Promise<void>;
  settle(): void;
  running: boolean;
  /** A fresh turn's ending while it is still queued (it then never runs); absent for a continuation. */
  cancel?: () => void;
}

export class TurnStops {
  /** Turns queued or running, by id. */
  private readonly slots = new Map<string, TurnSlot>();
  /** The turn running now (turns run one at a time, TurnOrder). */
  private current: string | null = null;
  private readonly stopped: string[] = [];

  /**
   * A turn is queued: from now on a stop can name it. `cancel` ends it at once if it is stopped before
   * it runs. A turn already queued or running keeps its slot: a second entry under its id (a resume
   * queued twice) gets a slot of its own that no stop names, never one that hides the live turn.
   */
  enter(turnId: string, cancel?: () => void): TurnSlot {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const slot: TurnSlot = {
      turnId,
      controller: new AbortController(),
      settled,
      settle,
      running: false,
      ...(cancel ? { cancel } : {}),
    };
    if (!this.slots.has(turnId)) this.slots.set(turnId, slot);
    return slot;
  }

  /**
   * Runs the turn when its place comes, with the signal a stop aborts; `turn` resolves to the stop
   * reason it ended with. A fresh turn cancelled while queued does not run at all.
   */
  async run(slot: TurnSlot, turn: (signal: AbortSignal) => Promise<string | undefined>): Promise<void> {
    if (slot.cancel && slot.controller.signal.aborted) return;
    slot.running = true;
    this.current = slot.turnId;
    try {
      const ending = await turn(slot.controller.signal);
      if (slot.controller.signal.aborted && ending === INTERRUPTED) this.remember(slot.turnId);
    } finally {
      this.leave(slot);
    }
  }

  /** Whether `turnId` is queued or running (a paused turn's continuation, once its results are in). */
  has(turnId: string): boolean {
    return this.slots.has(turnId);
  }

  /** Stops `turnId` (or the running turn when none is named: never a queued one) and waits for it to settle. */
  async stop(turnId?: string): Promise<StopAnswer> {
    const target = turnId ?? this.current;
    if (target === null) return { turnId: null, stopped: false };
    const slot = this.slots.get(target);
    if (!slot) return { turnId: target, stopped: this.stopped.includes(target) };
    if (!slot.running && slot.cancel) {
      // Queued behind another turn: it ends now, without running.
      slot.controller.abort();
      this.remember(target);
      this.leave(slot);
      slot.cancel();
      return { turnId: target, stopped: true };
    }
    slot.controller.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([slot.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    return { turnId: target, stopped: this.stopped.includes(target) };
  }

  /**
   * The conversation is being deleted: the running turn's model call is aborted now (it would go
   * on streaming, and being billed, for a conversation that is gone). Its writes are refused by
   * the deletion; the turns queued behind it then start and are refused as not found.
   */
  abortRunning(): void {
    if (this.current !== null) this.slots.get(this.current)?.controller.abort();
  }

  private leave(slot: TurnSlot): void {
    if (this.slots.get(slot.turnId) === slot) this.slots.delete(slot.turnId);
    if (this.current === slot.turnId) this.current = null;
    slot.settle();
  }

  /** A turn that ended "interrupted" because of a stop (here, or a paused turn's, TurnIntake.stop). */
  remember(turnId: string): void {
    if (this.stopped.includes(turnId)) return;
    this.stopped.push(turnId);
    if (this.stopped.length > REMEMBERED) this.stopped.shift();
  }
}
