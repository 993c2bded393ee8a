// Stopping a running turn (POST /stop, the websocket's `stop` frame): the turn running now holds an
// AbortController here; a stop aborts it and waits for the turn to settle, so what it streamed is
// saved (as "interrupted") before the caller hears back. Stops are idempotent: a turn stopped once
// answers `stopped: true` again, and a turn that is not running is left alone.

/** How many stopped turn ids are remembered, so a repeated stop answers as the first did. */
const REMEMBERED = 64;
/** A stop waits at most this long for the turn to settle (a tool already running finishes first). */
export const STOP_WAIT_MS = 15_000;

export interface StopAnswer {
  /** The turn the stop applies to; null when none was named and none is running. */
  turnId: string | null;
  /** True when the turn was stopped (now or by an earlier stop). */
  stopped: boolean;
}

export class TurnStops {
  private running: { turnId: string; controller: AbortController; settled: Promise<void> } | null = null;
  private readonly stopped: string[] = [];

  /** Runs one turn with a signal a stop aborts. Turns run one at a time (TurnOrder), so one slot is enough. */
  async run(turnId: string, turn: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.running = { turnId, controller, settled };
    try {
      await turn(controller.signal);
    } finally {
      if (this.running?.turnId === turnId) this.running = null;
      settle();
    }
  }

  /** Stops `turnId` (or the running turn when none is named) and waits for it to settle. */
  async stop(turnId?: string): Promise<StopAnswer> {
    const running = this.running;
    const target = turnId ?? running?.turnId ?? null;
    if (target === null) return { turnId: null, stopped: false };
    if (running?.turnId !== target) return { turnId: target, stopped: this.stopped.includes(target) };
    if (!running.controller.signal.aborted) {
      this.stopped.push(target);
      if (this.stopped.length > REMEMBERED) this.stopped.shift();
      running.controller.abort();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([running.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    return { turnId: target, stopped: true };
  }
}
