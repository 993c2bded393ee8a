// A turn's events answered as SSE: comment lines keep a quiet stream alive through idle proxies,
// and a stream that stops before its turn_end ends with an error and a turn_end, never silently.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TurnEvent } from "../../core/events";
import { sseResponse } from "../../workers/chat/turn-response";

function controlled() {
  let push!: (e: TurnEvent) => void;
  let end!: () => void;
  let fail!: (err: Error) => void;
  const events = new ReadableStream<TurnEvent>({
    start(c) {
      push = (e) => c.enqueue(e);
      end = () => c.close();
      fail = (err) => c.error(err);
    },
  });
  return { events, push: (e: TurnEvent) => push(e), end: () => end(), fail: (err: Error) => fail(err) };
}

const reader = (res: Response) => {
  const r = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    read: async () => {
      const { value } = await r.read();
      text += decoder.decode(value ?? new Uint8Array());
      return text;
    },
    rest: async () => {
      for (;;) {
        const { value, done } = await r.read();
        text += decoder.decode(value ?? new Uint8Array());
        if (done) return text;
      }
    },
  };
};

afterEach(() => vi.useRealTimers());

describe("sseResponse", () => {
  it("sends a comment line every 15 s while the turn is quiet", async () => {
    vi.useFakeTimers();
    const turn = controlled();
    const body = reader(sseResponse(turn.events));
    turn.push({ type: "turn_queued", turnId: "turn_1", ahead: 1 });
    expect(await body.read()).toBe('event: turn_queued\ndata: {"type":"turn_queued","turnId":"turn_1","ahead":1}\n\n');
    const quiet = body.read();
    await vi.advanceTimersByTimeAsync(15_000);
    expect(await quiet).toMatch(/\n\n: keepalive\n\n$/);
    turn.end();
  });

  it("ends a stream cut off after turn_start with an error and a turn_end", async () => {
    const turn = controlled();
    const body = reader(sseResponse(turn.events));
    turn.push({ type: "turn_start", turnId: "turn_2" });
    turn.push({ type: "delta", turnId: "turn_2", text: "par" });
    while (!(await body.read()).includes('"par"'));
    turn.fail(new Error("disconnected prematurely"));
    const blocks = (await body.rest()).split("\n\n").filter(Boolean);
    const last = blocks.slice(-2).map((b) => JSON.parse(b.split("\ndata: ")[1]));
    expect(last[0]).toMatchObject({ type: "error", turnId: "turn_2", error: { type: "turn_interrupted" } });
    expect(last[1]).toMatchObject({ type: "turn_end", turnId: "turn_2", stop_reason: "error" });
  });

  it("adds nothing to a turn that ended, or to a refusal before it started", async () => {
    const ended = controlled();
    const a = reader(sseResponse(ended.events));
    ended.push({ type: "turn_start", turnId: "turn_3" });
    ended.push({
      type: "turn_end",
      turnId: "turn_3",
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
      timing: { serverMs: 1, modelMs: 1, queuedMs: 0 },
    } as TurnEvent);
    ended.end();
    expect((await a.rest()).match(/^event: /gm)).toHaveLength(2);
    const refused = controlled();
    const b = reader(sseResponse(refused.events));
    refused.push({ type: "error", turnId: "turn_4", error: { type: "turn_paused", message: "waiting", status: 409 } });
    refused.end();
    expect((await b.rest()).match(/^event: /gm)).toHaveLength(1);
  });

  it("cancels the turn's event stream when the client leaves", async () => {
    let cancelled: unknown = "not cancelled";
    let push!: (e: TurnEvent) => void;
    const events = new ReadableStream<TurnEvent>({
      start(c) {
        push = (e) => c.enqueue(e);
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const body = sseResponse(events).body!.getReader();
    push({ type: "turn_start", turnId: "turn_5" });
    await body.read();
    await body.cancel("client gone");
    expect(cancelled).toBe("client gone");
  });
});
