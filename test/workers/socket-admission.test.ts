// A websocket frame's admission (durable-objects/conversation/sockets.ts) never loses a frame: a
// sender whose socket closes meanwhile still gets its turn queued (and its Idempotency-Key settles),
// and an admission that throws (the rate limiter, D1, storage) is answered with an `error` frame,
// any key it claimed freed again.
import { describe, expect, it } from "vitest";
import { connectSocket, createConversation, eventually, inConversation, transcript } from "./helpers";
import { upload } from "./attachment-helpers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The fields these tests read of a server frame (an `error` frame carries `ref` and `status` beside the schema's). */
type Frame = {
  type: string;
  ref?: string;
  turnId?: string | null;
  replayed?: boolean;
  stop_reason?: string;
  error?: { type: string; status?: number; message?: string };
};

const open = async (id: string) => {
  const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
  const frames = () => s.events as unknown as Frame[];
  const next = async (pred: (f: Frame) => boolean, timeoutMs?: number) =>
    (await s.next((e) => pred(e as unknown as Frame), timeoutMs)) as unknown as Frame;
  return { ws: s.ws as WebSocket, frames, next };
};

/** D1 that answers each statement `ms` later while `slow.on` holds (a congested database). */
function slowDb(db: D1Database, slow: { on: boolean; ms: number }): D1Database {
  const statement = (st: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(st, {
      get: (target, prop) => {
        const member = Reflect.get(target, prop, target) as unknown;
        if (typeof member !== "function") return member;
        const fn = member as (...args: unknown[]) => unknown;
        if (prop === "bind") return (...args: unknown[]) => statement(fn.apply(target, args) as D1PreparedStatement);
        return async (...args: unknown[]) => {
          if (slow.on) await sleep(slow.ms);
          return fn.apply(target, args);
        };
      },
    });
  return new Proxy(db, {
    get: (target, prop) => {
      const member = Reflect.get(target, prop, target) as unknown;
      if (typeof member !== "function") return member;
      const fn = member as (...args: unknown[]) => unknown;
      if (prop === "prepare") return (sql: string) => statement(fn.call(target, sql) as D1PreparedStatement);
      return fn.bind(target);
    },
  });
}

/** A rate limiter whose object cannot be reached. */
const brokenLimiter = {
  idFromName: (name: string) => name,
  get: () => ({
    take: async () => {
      throw new Error("injected rate limiter failure");
    },
  }),
};

describe("websocket frame admission", () => {
  it("queues a named, keyed send whose socket closed while it was admitted; the key then settles, never 409 forever", async () => {
    const id = await createConversation();
    const att = await upload(id, "notes.txt", "alpha\nbeta\n", "text/plain");
    expect(att.status).toBe(201);
    const slow = { on: true, ms: 800 };
    await inConversation(id, (o) => {
      o.env = { ...o.env, DB: slowDb(o.env.DB, slow) };
    });
    const first = await open(id);
    const frame = { type: "send", content: "keep this one", attachments: [att.json.id], idempotencyKey: "k-1" };
    first.ws.send(JSON.stringify({ ...frame, ref: "r1" }));
    await sleep(100);
    first.ws.close();
    // The admission goes on after the close (its D1 reads are slow): let it finish, then D1 recovers.
    await sleep(3_000);
    slow.on = false;

    // The same key again: the turn it started is told (replayed), never idempotency_in_progress for good.
    const again = await open(id);
    let answer: Frame | undefined;
    for (let attempt = 0; attempt < 30 && answer?.type !== "accepted"; attempt++) {
      const ref = `retry-${attempt}`;
      again.ws.send(JSON.stringify({ ...frame, ref }));
      answer = await again.next((f) => f.ref === ref);
      if (answer.type === "error") {
        expect(answer.error?.type).toBe("idempotency_in_progress");
        await sleep(500);
      }
    }
    expect(answer?.type).toBe("accepted");
    const replayed = await again.next((f) => f.type === "turn_start" && f.turnId === answer?.turnId);
    expect(replayed.replayed).toBe(true);
    // The turn ran once, with its attachment's note.
    const saved = await transcript(id);
    expect(saved.filter((m) => m.role === "user" && JSON.stringify(m.content).includes("keep this one"))).toHaveLength(
      1,
    );
    again.ws.close();
  });

  it("answers a send, a stop and a ping whose admission throws with an error frame (503), and the socket goes on", async () => {
    const id = await createConversation();
    const realLimiter = await inConversation(id, (o) => {
      const real = o.env.RATE_LIMITER;
      o.env = {
        ...o.env,
        RATE_LIMIT_PER_MINUTE: "600",
        RATE_LIMITER: brokenLimiter as unknown as Env["RATE_LIMITER"],
      };
      return real;
    });
    expect(realLimiter).toBeDefined();
    const s = await open(id);
    s.ws.send(JSON.stringify({ type: "send", content: "hello", ref: "r1" }));
    const refused = await s.next((f) => f.type === "error" && f.ref === "r1", 5_000);
    expect(refused.turnId).toMatch(/^turn_/);
    expect(refused.error).toMatchObject({ type: "api_error", status: 503 });
    // The refused send started no turn.
    expect(s.frames().some((f) => f.type === "turn_start")).toBe(false);

    s.ws.send(JSON.stringify({ type: "stop", turnId: refused.turnId }));
    const stopRefused = await s.next((f) => f !== refused && f.type === "error", 5_000);
    expect(stopRefused).toMatchObject({ turnId: refused.turnId, error: { type: "api_error", status: 503 } });

    s.ws.send(JSON.stringify({ type: "ping" }));
    const pingRefused = await s.next((f) => f !== refused && f !== stopRefused && f.type === "error", 5_000);
    expect(pingRefused).toMatchObject({ turnId: null, error: { type: "api_error", status: 503 } });

    // The limiter is back: the same socket sends a turn that runs.
    await inConversation(id, (o) => {
      o.env = { ...o.env, RATE_LIMIT_PER_MINUTE: "0" };
    });
    s.ws.send(JSON.stringify({ type: "send", content: "hello again", ref: "r2" }));
    const accepted = await s.next((f) => f.type === "accepted" && f.ref === "r2");
    const end = await s.next((f) => f.type === "turn_end" && f.turnId === accepted.turnId);
    expect(end.stop_reason).toBe("end_turn");
    expect(await transcript(id)).toHaveLength(2);
    s.ws.close();
  });

  it("frees a key it claimed when the admission throws after the claim, so a retry with it runs", async () => {
    const id = await createConversation();
    const s = await open(id);
    await inConversation(id, (o) => {
      const real = o.paused.get.bind(o.paused);
      let failures = 1;
      o.paused.get = async () => {
        if (failures-- > 0) throw new Error("injected storage failure");
        return real();
      };
    });
    const frame = { type: "send", content: "keyed", idempotencyKey: "k-claimed" };
    s.ws.send(JSON.stringify({ ...frame, ref: "r1" }));
    const refused = await s.next((f) => f.type === "error" && f.ref === "r1", 5_000);
    expect(refused.error).toMatchObject({ type: "api_error", status: 503 });
    s.ws.send(JSON.stringify({ ...frame, ref: "r2" }));
    const answer = await s.next((f) => f.ref === "r2");
    expect(answer).toMatchObject({ type: "accepted" });
    const end = await s.next((f) => f.type === "turn_end" && f.turnId === answer.turnId);
    expect(end.stop_reason).toBe("end_turn");
    expect(await eventually(async () => (await transcript(id)).length === 2)).toBe(true);
    s.ws.close();
  });
});
