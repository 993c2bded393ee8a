// TurnStops (durable-objects/conversation/turn-stops.ts) on its own: `stopped` is true only when
// the turn really ended "interrupted" because of a stop, and a queued turn is cancelled at once.
import { describe, expect, it } from "vitest";
import { TurnStops } from "../../durable-objects/conversation/turn-stops";

/** A turn that ends with `ending` once `release` is called, whatever its signal says. */
function heldTurn() {
  let release!: (ending: string) => void;
  const ended = new Promise<string>((resolve) => (release = resolve));
  let seen: AbortSignal | undefined;
  const turn = (signal: AbortSignal) => ((seen = signal), ended);
  return { turn, release, signal: () => seen };
}

describe("TurnStops", () => {
  it("answers stopped: false for a turn that ended otherwise than interrupted, though the stop reached it", async () => {
    const stops = new TurnStops();
    const held = heldTurn();
    const running = stops.run(stops.enter("turn_a"), held.turn);
    const answer = stops.stop("turn_a");
    expect(held.signal()?.aborted).toBe(true);
    // Its last step had already finished: it ends normally.
    held.release("end_turn");
    await running;
    expect(await answer).toEqual({ turnId: "turn_a", stopped: false });
    expect(await stops.stop("turn_a")).toEqual({ turnId: "turn_a", stopped: false });
  });

  it("answers stopped: true, then again, for a turn the stop ended as interrupted", async () => {
    const stops = new TurnStops();
    const held = heldTurn();
    const running = stops.run(stops.enter("turn_b"), held.turn);
    const answer = stops.stop();
    held.release("interrupted");
    await running;
    expect(await answer).toEqual({ turnId: "turn_b", stopped: true });
    expect(await stops.stop("turn_b")).toEqual({ turnId: "turn_b", stopped: true });
    expect(await stops.stop()).toEqual({ turnId: null, stopped: false });
  });

  it("cancels a queued turn at once (it never runs); a stop without a turnId leaves queued turns alone", async () => {
    const stops = new TurnStops();
    const held = heldTurn();
    const running = stops.run(stops.enter("turn_c"), held.turn);
    let cancelled = 0;
    const queued = stops.enter("turn_d", () => cancelled++);
    expect(await stops.stop("turn_d")).toEqual({ turnId: "turn_d", stopped: true });
    expect(cancelled).toBe(1);
    let ran = false;
    const stopRunning = stops.stop();
    held.release("interrupted");
    await running;
    expect(await stopRunning).toEqual({ turnId: "turn_c", stopped: true });
    await stops.run(queued, async () => ((ran = true), "end_turn"));
    expect(ran).toBe(false);
    expect(await stops.stop("turn_d")).toEqual({ turnId: "turn_d", stopped: true });
    expect(cancelled).toBe(1);
  });
});
