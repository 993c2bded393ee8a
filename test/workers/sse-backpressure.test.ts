// A slow or stalled reader never makes a turn's events pile up in memory: the chat worker reads the
// object's events only as its SSE client reads them, and the conversation's object cuts off a caller
// whose NDJSON stream falls too far behind (an error `turn_interrupted`) while the turn runs on.
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeEvents, type TurnEvent } from "../../core/events";
import { zeroUsage } from "../../core/types";
import { CALLER_UNREAD_BYTES, ndjson } from "../../durable-objects/conversation/turn-intake";
import { sseResponse } from "../../workers/chat/turn-response";

const turnEnd = (turnId: string): TurnEvent => ({
  type: "turn_end",
  turnId,
  stop_reason: "end_turn",
  usage: zeroUsage(),
  timing: { serverMs: 0, modelMs: 0, queuedMs: 0 },
});

/** turn_start, `n` deltas of `text`, turn_end, one per pull; counts its pulls and its cancel. */
function source(n: number, text: string) {
  const seen = { pulled: 0, cancelled: undefined as unknown };
  const events = new ReadableStream<TurnEvent>(
    {
      pull(c) {
        if (seen.pulled === 0) c.enqueue({ type: "turn_start", turnId: "turn_x" });
        else if (seen.pulled <= n) c.enqueue({ type: "delta", turnId: "turn_x", text: `${seen.pulled}:${text}` });
        else {
          c.enqueue(turnEnd("turn_x"));
          c.close();
        }
        seen.pulled++;
      },
      cancel(reason) {
        seen.cancelled = reason;
      },
    },
    { highWaterMark: 1 },
  );
  return { events, seen };
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of body) text += decoder.decode(chunk, { stream: true });
  return text;
}

const sseEvents = (text: string) =>
  text
    .split("\n\n")
    .filter((b) => b.startsWith("event: "))
    .map((b) => JSON.parse(b.split("\ndata: ")[1]) as TurnEvent);

afterEach(() => vi.useRealTimers());

describe("sseResponse under backpressure", () => {
  it("reads the turn's events only as its client reads them", async () => {
    const { events, seen } = source(200, "x".repeat(100_000));
    const res = sseResponse(events);
    await new Promise((r) => setTimeout(r, 500));
    await res.body!.cancel();
    expect(seen.pulled).toBeLessThan(10);
  });

  it("still brings every event in order, ending with the turn_end", async () => {
    const { events } = source(50, "y".repeat(10_000));
    const got = sseEvents(await readAll(sseResponse(events).body!));
    expect(got).toHaveLength(52);
    expect(got[0]).toEqual({ type: "turn_start", turnId: "turn_x" });
    for (let i = 1; i <= 50; i++) expect(got[i]).toMatchObject({ type: "delta", text: `${i}:${"y".repeat(10_000)}` });
    expect(got[51]).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
  });

  it("cancels the turn's event stream when the client leaves mid-turn", async () => {
    const { events, seen } = source(200, "z".repeat(1_000));
    const reader = sseResponse(events).body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel("client gone");
    expect(seen.cancelled).toBe("client gone");
    expect(seen.pulled).toBeLessThan(10);
  });

  it("keeps one keepalive waiting for a stalled client, not one per 15 s", async () => {
    vi.useFakeTimers();
    const quiet = new ReadableStream<TurnEvent>({ pull() {} });
    const reader = sseResponse(quiet).body!.getReader();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(": keepalive\n\n");
    const next = reader.read().then(() => "read");
    await vi.advanceTimersByTimeAsync(1);
    expect(await Promise.race([next, Promise.resolve("waiting")])).toBe("waiting");
    // Still sent while the turn stays quiet and the client reads.
    await vi.advanceTimersByTimeAsync(15_000);
    expect(await next).toBe("read");
    await reader.cancel();
  });

  it("tells a stream its object cut off once: one turn_interrupted, then a turn_end", async () => {
    const events = new ReadableStream<TurnEvent>({
      start(c) {
        c.enqueue({ type: "turn_start", turnId: "turn_c" });
        c.enqueue({ type: "error", turnId: "turn_c", error: { type: "turn_interrupted", message: "behind" } });
        c.close();
      },
    });
    const got = sseEvents(await readAll(sseResponse(events).body!));
    expect(got.map((e) => e.type)).toEqual(["turn_start", "error", "turn_end"]);
    expect(got[2]).toMatchObject({ turnId: "turn_c", stop_reason: "error" });
  });
});

describe("the object's NDJSON stream for one caller", () => {
  const MiB = "m".repeat(1024 * 1024);

  it("cuts off a caller who reads nothing past its unread cap; the turn runs on", async () => {
    let written = 0;
    let turnDone = false;
    const body = ndjson(async (sink) => {
      sink({ type: "turn_start", turnId: "turn_s" });
      for (let i = 0; i < 40; i++) {
        sink({ type: "delta", turnId: "turn_s", text: MiB });
        written++;
      }
      sink(turnEnd("turn_s"));
      turnDone = true;
    });
    // The turn never waits on its reader: it is over before anything is read.
    await new Promise((r) => setTimeout(r, 50));
    expect(turnDone).toBe(true);
    expect(written).toBe(40);
    const got: TurnEvent[] = [];
    for await (const e of body.pipeThrough(decodeEvents())) got.push(e);
    const deltas = got.filter((e) => e.type === "delta").length;
    expect(deltas * 1024 * 1024).toBeLessThanOrEqual(CALLER_UNREAD_BYTES + 1024 * 1024);
    expect(deltas).toBeLessThan(40);
    expect(got.at(-1)).toMatchObject({ type: "error", turnId: "turn_s", error: { type: "turn_interrupted" } });
    expect(got.some((e) => e.type === "turn_end")).toBe(false);
  });

  it("brings a reader that keeps up every event, however many bytes pass", async () => {
    const body = ndjson(async (sink) => {
      sink({ type: "turn_start", turnId: "turn_f" });
      for (let i = 0; i < 40; i++) {
        sink({ type: "delta", turnId: "turn_f", text: MiB });
        await new Promise((r) => setTimeout(r, 0));
      }
      sink(turnEnd("turn_f"));
    });
    let deltas = 0;
    let last: TurnEvent | undefined;
    for await (const e of body.pipeThrough(decodeEvents())) {
      if (e.type === "delta") deltas++;
      last = e;
    }
    expect(deltas).toBe(40);
    expect(last).toMatchObject({ type: "turn_end", turnId: "turn_f" });
  });

  it("stops writing to a caller who left, without failing the turn", async () => {
    let finished = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const body = ndjson(async (sink) => {
      sink({ type: "turn_start", turnId: "turn_l" });
      await gate;
      sink({ type: "delta", turnId: "turn_l", text: "after" });
      sink(turnEnd("turn_l"));
      finished = true;
    });
    await body.cancel("left");
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(finished).toBe(true);
  });
});
