// A large websocket frame costs the conversation nothing before it is admitted
// (durable-objects/conversation/sockets.ts, socket-frames.ts): past 64 KiB a frame is checked
// against its key and the key's request token before it is read, and a frame nested deeper than
// the JSON depth rule is refused from its text, never handed to JSON.parse (parsing deep nesting
// is what costs: seconds for a few megabytes, with every other socket of the object waiting).
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RateRule } from "../../durable-objects/rate-limiter-do";
import { connectSocket, createConversation, inConversation, newTenant, transcript } from "./helpers";

/** The fields these tests read of a server frame (an `error` frame carries `ref` beside the schema's). */
type Frame = {
  type: string;
  ref?: string;
  turnId?: string | null;
  error?: { type: string; message?: string; retryAfterSeconds?: number };
};

const open = async (id: string, key: string) => {
  const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
  const frames = () => s.events as unknown as Frame[];
  const next = async (pred: (f: Frame) => boolean, timeoutMs?: number) =>
    (await s.next((e) => pred(e as unknown as Frame), timeoutMs)) as unknown as Frame;
  return { ws: s.ws as WebSocket, frames, next };
};

/** 4,000,000 characters of nesting: well-formed JSON, 2,000,000 levels deep. */
const DEEP = "[".repeat(2_000_000) + "]".repeat(2_000_000);
const LARGE = 64 * 1024;

/** Counts JSON.parse calls on large text (the object runs in this isolate, so it shares JSON). */
function watchLargeParses() {
  const parse = vi.spyOn(JSON, "parse");
  return () => parse.mock.calls.filter(([text]) => typeof text === "string" && text.length > LARGE).length;
}

/** A rate limiter: answers each ask with `answer`, and notes the buckets asked and the large parses seen by then. */
function limiter(answer: () => object, parsesSoFar: () => number) {
  const asks: { buckets: string[]; parsedBefore: number }[] = [];
  const binding = {
    idFromName: (name: string) => name,
    get: () => ({
      take: async (rules: RateRule[]) => {
        asks.push({ buckets: rules.map((r) => r.bucket), parsedBefore: parsesSoFar() });
        return answer();
      },
    }),
  };
  return { asks, binding: binding as unknown as Env["RATE_LIMITER"] };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a large websocket frame", () => {
  it("nested past the depth rule is refused from its text: an invalid_request error, JSON.parse never reached", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const s = await open(id, key);
    const largeParses = watchLargeParses();
    s.ws.send(DEEP);
    const refused = await s.next((f) => f.type === "error");
    expect(refused).toMatchObject({
      type: "error",
      turnId: null,
      error: { type: "invalid_request", message: "frame: nested deeper than 64 levels" },
    });
    expect(largeParses()).toBe(0);
    // The socket goes on.
    s.ws.send(JSON.stringify({ type: "ping" }));
    await s.next((f) => f.type === "pong");
    s.ws.close();
  });

  it("of a rate-limited key is refused as rate_limited before it is read: no parse, no depth or validation error", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const largeParses = watchLargeParses();
    const empty = limiter(() => ({ ok: false, bucket: "requests", perMinute: 5, retryAfterSeconds: 9 }), largeParses);
    await inConversation(id, (o) => {
      o.env = { ...o.env, RATE_LIMIT_PER_MINUTE: "5", RATE_LIMITER: empty.binding };
    });
    const s = await open(id, key);
    // A deep frame, then a valid send of some 200 KB: neither is read.
    s.ws.send(DEEP);
    const first = await s.next((f) => f.type === "error");
    s.ws.send(JSON.stringify({ type: "send", content: "x".repeat(200_000), ref: "big" }));
    const second = await s.next((f) => f.type === "error" && f !== first);
    for (const refused of [first, second]) {
      expect(refused.error).toMatchObject({ type: "rate_limited", status: 429, retryAfterSeconds: 9 });
      // Not read, so no turn and no ref: turnId null says no turn started.
      expect(refused.turnId).toBeNull();
      expect(refused).not.toHaveProperty("ref");
    }
    expect(largeParses()).toBe(0);
    expect(empty.asks).toEqual([
      { buckets: ["requests"], parsedBefore: 0 },
      { buckets: ["requests"], parsedBefore: 0 },
    ]);
    expect(s.frames().some((f) => f.type === "accepted" || f.type === "turn_start")).toBe(false);
    expect(await transcript(id, key)).toEqual([]);
    s.ws.close();
  });

  it("admitted, is read and runs as any send: its ref echoed, one request token and one turn token taken", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const granting = limiter(
      () => ({ ok: true }),
      () => 0,
    );
    await inConversation(id, (o) => {
      o.env = {
        ...o.env,
        RATE_LIMIT_PER_MINUTE: "600",
        TURN_RATE_LIMIT_PER_MINUTE: "600",
        RATE_LIMITER: granting.binding,
      };
    });
    const s = await open(id, key);
    const content = `${"a long paste ".repeat(8_000)}\n@reply-chars 40`;
    expect(content.length).toBeGreaterThan(LARGE);
    s.ws.send(JSON.stringify({ type: "send", content, ref: "big" }));
    const accepted = await s.next((f) => f.type === "accepted" && f.ref === "big");
    await s.next((f) => f.type === "turn_end" && f.turnId === accepted.turnId);
    expect(granting.asks.flatMap((a) => a.buckets).sort()).toEqual(["requests", "turns"]);
    // A large frame that fails validation after its admission still carries its ref.
    s.ws.send(JSON.stringify({ type: "send", content: "y".repeat(1_000_001), ref: "too-long" }));
    const long = await s.next((f) => f.type === "error");
    expect(long).toMatchObject({ turnId: null, ref: "too-long", error: { type: "invalid_request" } });
    expect((await transcript(id, key)).map((m) => m.role)).toEqual(["user", "assistant"]);
    s.ws.close();
  });
});
