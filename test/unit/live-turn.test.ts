// The running turn as a resuming socket gets it (durable-objects/conversation/live-turn.ts): its
// start and what it streamed since its last saved message, merged; a turn stopped while queued
// (which starts and ends at once) never takes the running one's place; a turn that never ended is
// no running turn once nothing is in flight.
import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../../core/events";
import { type StoredMessage, zeroUsage } from "../../core/types";
import { LIVE_FRAME_CHARS, LiveTurn } from "../../durable-objects/conversation/live-turn";

const start = (turnId: string): TurnEvent => ({ type: "turn_start", turnId });
const delta = (turnId: string, text: string): TurnEvent => ({ type: "delta", turnId, text });
const end = (turnId: string): TurnEvent => ({
  type: "turn_end",
  turnId,
  stop_reason: "interrupted",
  usage: zeroUsage(),
  timing: { serverMs: 0, modelMs: 0, queuedMs: 0 },
});

describe("LiveTurn", () => {
  it("keeps the running turn's unsaved part, merged, and forgets what a saved message holds", () => {
    const live = new LiveTurn();
    for (const e of [start("a"), delta("a", "one "), delta("a", "two ")]) live.record(e);
    live.record({ type: "message", turnId: "a", message: { seq: 2 } as StoredMessage });
    for (const e of [delta("a", "three "), delta("a", "four")]) live.record(e);
    expect(live.frames(true)).toEqual([{ ...start("a"), resumed: true }, delta("a", "three four")]);
    live.record(end("a"));
    expect(live.frames(true)).toEqual([]);
  });

  it("keeps the running turn when a queued one is stopped (it starts and ends at once)", () => {
    const live = new LiveTurn();
    for (const e of [start("a"), delta("a", "so far"), start("b"), end("b"), delta("a", ", and on")]) live.record(e);
    expect(live.frames(true)).toEqual([{ ...start("a"), resumed: true }, delta("a", "so far, and on")]);
  });

  it("shows no turn when none is in flight (one that threw never sent its turn_end), and ignores an idempotent replay", () => {
    const live = new LiveTurn();
    live.record(start("dead"));
    expect(live.frames(false)).toEqual([]);
    live.record({ type: "turn_start", turnId: "old", replayed: true });
    live.record(start("next"));
    expect(live.frames(true)[0]).toMatchObject({ turnId: "next", resumed: true });
  });

  it("cuts merged text into frames of at most LIVE_FRAME_CHARS, and keeps sub-agents' pieces apart", () => {
    const live = new LiveTurn();
    live.record(start("a"));
    for (let i = 0; i < 5; i++) live.record(delta("a", "x".repeat(LIVE_FRAME_CHARS / 2)));
    live.record({ ...delta("a", "agent"), agent: { segment: "s1", name: "helper" } });
    const frames = live.frames(true).slice(1);
    expect(frames.map((f) => (f.type === "delta" ? f.text.length : 0))).toEqual([
      LIVE_FRAME_CHARS,
      LIVE_FRAME_CHARS,
      LIVE_FRAME_CHARS / 2,
      5,
    ]);
    expect(frames.at(-1)).toMatchObject({ agent: { segment: "s1" } });
  });
});
