// A websocket `send` refused before it became a turn (durable-objects/conversation/sockets.ts,
// socket-frames.ts): a frame that fails validation is answered with its `ref` (it has no turnId,
// and its sender must still tell that the error answers it), and every send takes the key's
// request token, even one refused for want of a model or a conversation; the turn token only
// when the turn can run.
import { describe, expect, it } from "vitest";
import type { RateRule } from "../../durable-objects/rate-limiter-do";
import { connectSocket, createConversation, inConversation, newTenant, transcript } from "./helpers";

/** The fields these tests read of a server frame (an `error` frame carries `ref` beside the schema's). */
type Frame = {
  type: string;
  ref?: string;
  turnId?: string | null;
  stop_reason?: string;
  error?: { type: string; status?: number; message?: string };
};

const open = async (id: string, key: string) => {
  const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
  const frames = () => s.events as unknown as Frame[];
  const next = async (pred: (f: Frame) => boolean, timeoutMs?: number) =>
    (await s.next((e) => pred(e as unknown as Frame), timeoutMs)) as unknown as Frame;
  return { ws: s.ws as WebSocket, frames, next };
};

/** A rate limiter that grants every ask and keeps the buckets each one named. */
function countingLimiter() {
  const asks: string[][] = [];
  const limiter = {
    idFromName: (name: string) => name,
    get: () => ({
      take: async (rules: RateRule[]) => {
        asks.push(rules.map((r) => r.bucket));
        return { ok: true };
      },
    }),
  };
  return { asks, binding: limiter as unknown as Env["RATE_LIMITER"] };
}

describe("a send frame refused before it is a turn", () => {
  it("is answered with its ref (turnId null, invalid_request naming the turn-less refusal): content too long, too many attachments", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const s = await open(id, key);
    s.ws.send(JSON.stringify({ type: "send", content: "y".repeat(1_000_001), ref: "too-long" }));
    const long = await s.next((f) => f.type === "error");
    expect(long).toMatchObject({ type: "error", turnId: null, ref: "too-long", error: { type: "invalid_request" } });
    expect(long.error?.message).toMatch(/^content: /);
    const attachments = Array.from({ length: 21 }, (_, i) => `att_${i}`);
    s.ws.send(JSON.stringify({ type: "send", content: "with files", attachments, ref: "too-many" }));
    const many = await s.next((f) => f.type === "error" && f !== long);
    expect(many).toMatchObject({ type: "error", turnId: null, ref: "too-many", error: { type: "invalid_request" } });
    // A ref that is itself invalid is not echoed; a frame that is not JSON has none to echo.
    s.ws.send(JSON.stringify({ type: "send", content: "x", ref: "" }));
    const bad = await s.next((f) => f.type === "error" && f !== long && f !== many);
    expect(bad).not.toHaveProperty("ref");
    // Nothing ran; the socket goes on.
    s.ws.send(JSON.stringify({ type: "send", content: "still here", ref: "ok" }));
    const accepted = await s.next((f) => f.type === "accepted" && f.ref === "ok");
    await s.next((f) => f.type === "turn_end" && f.turnId === accepted.turnId);
    expect((await transcript(id, key)).map((m) => m.role)).toEqual(["user", "assistant"]);
    s.ws.close();
  });

  it("takes the key's request token (and no turn token) when no model is configured; a send that runs takes both", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const { asks, binding } = countingLimiter();
    const own = await inConversation(id, (o) => {
      const env = o.env;
      o.env = {
        ...o.env,
        RATE_LIMIT_PER_MINUTE: "600",
        TURN_RATE_LIMIT_PER_MINUTE: "600",
        RATE_LIMITER: binding,
        DEV_BOOTSTRAP: undefined,
        MODEL_PROVIDER: undefined,
        ANTHROPIC_API_KEY: undefined,
      } as Env;
      return env;
    });
    const s = await open(id, key);
    s.ws.send(JSON.stringify({ type: "send", content: "no model here", ref: "r1" }));
    const refused = await s.next((f) => f.type === "error" && f.ref === "r1");
    expect(refused.error).toMatchObject({ type: "model_not_configured", status: 503 });
    expect(asks).toEqual([["requests"]]);

    // The model is back: a send that runs takes a request token and a turn token.
    await inConversation(id, (o) => {
      o.env = { ...o.env, DEV_BOOTSTRAP: own.DEV_BOOTSTRAP, MODEL_PROVIDER: own.MODEL_PROVIDER } as Env;
      o.env = { ...o.env, ANTHROPIC_API_KEY: own.ANTHROPIC_API_KEY } as Env;
    });
    s.ws.send(JSON.stringify({ type: "send", content: "now with a model", ref: "r2" }));
    const accepted = await s.next((f) => f.type === "accepted" && f.ref === "r2");
    await s.next((f) => f.type === "turn_end" && f.turnId === accepted.turnId);
    expect(asks).toEqual([["requests"], ["requests", "turns"]]);
    await inConversation(id, (o) => {
      o.env = own;
    });
    s.ws.close();
  });
});
