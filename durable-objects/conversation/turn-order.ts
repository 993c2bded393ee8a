// Ordering: turns run one at a time in arrival order (the object is the conversation's single
// writer), and websocket frames are admitted one at a time so no frame's turn overtakes another's.
export class TurnOrder {
  private turnChain: Promise<unknown> = Promise.resolve();
  /** Websocket frames waiting to be admitted as turns, in arrival order. */
  private frameChain: Promise<unknown> = Promise.resolve();
  /** Turns queued or running: a resuming socket is told whether more is still to come. */
  private queuedOrRunning = 0;

  constructor(private readonly ctx: DurableObjectState) {}

  get turnsInFlight(): number {
    return this.queuedOrRunning;
  }

  /**
   * A turn: it waits for the previous one to settle, counts as in flight until it settles itself
   * (`settled` runs then) or `leave` is called (a turn cancelled while it waits: it still passes
   * through the chain, but no later turn waits behind it), and keeps the object alive while it runs.
   */
  turn<T>(run: () => Promise<T>, settled: () => void): { result: Promise<T>; leave: () => void } {
    this.queuedOrRunning++;
    let counted = true;
    const leave = () => {
      if (counted) this.queuedOrRunning--;
      counted = false;
    };
    const result = this.turnChain.then(run).finally(() => {
      leave();
      settled();
    });
    this.turnChain = result.catch(() => {});
    this.ctx.waitUntil(this.turnChain);
    return { result, leave };
  }

  /** Work that writes messages outside a turn (an attachment's note), in order with the turns. */
  inOrder<T>(run: () => Promise<T>): Promise<T> {
    const result = this.turnChain.then(run);
    this.turnChain = result.catch(() => {});
    return result;
  }

  /**
   * A frame's admission (its awaits on the head, the rate limiter): frames are admitted one at a
   * time, so those awaits can never let a later frame's turn overtake an earlier one's.
   */
  admit(run: () => Promise<unknown>): Promise<unknown> {
    const result = this.frameChain.then(run);
    this.frameChain = result.catch(() => {});
    return result;
  }
}
