// The typed client's turn stream when things go wrong mid-body: a connection that drops (undici's
// TypeError "terminated") throws turn_interrupted with the key, unless the turn had already ended;
// a stream the server itself cut off (`error` turn_interrupted, then a synthetic turn_end) throws
// the same after its events; leaving a quiet stream (keepalives only) ends it at once and cancels
// the body; an AbortSignal stops a turn and a request.
import { describe, expect, it } from "vitest";
import { ApiError, createClient, type TurnEvent } from "../../client";

const enc = new TextEncoder();
const frame = (e: object) => enc.encode(`event: x\ndata: ${JSON.stringify(e)}\n\n`);
const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const timing = { serverMs: 1, modelMs: 1, queuedMs: 0 };
const sseHeaders = { "content-type": "text/event-stream; charset=utf-8" };

/** A client whose SSE body sends `events`, then fails the way a dropped connection does (undici: TypeError "terminated"). */
const droppingClient = (events: object[], sent = 0) =>
  createClient({
    baseUrl: "http://api.test",
    key: "k",
    fetch: (async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          // One event per read; the read after the last one fails (the queue is read before the error).
          pull(c) {
            const e = events[sent++];
            if (e) c.enqueue(frame(e));
            else c.error(new TypeError("terminated"));
          },
        }),
        { headers: sseHeaders },
      )) as typeof fetch,
  });

/** A client whose SSE body sends `events` and ends. */
const clientAnswering = (events: object[]) =>
  createClient({
    baseUrl: "http://api.test",
    key: "k",
    fetch: (async () =>
      new Response(events.map((e) => `event: x\ndata: ${JSON.stringify(e)}\n\n`).join(""), {
        headers: sseHeaders,
      })) as typeof fetch,
  });

async function drain(it: AsyncGenerator<TurnEvent>) {
  const seen: string[] = [];
  try {
    for await (const e of it) seen.push(e.type);
  } catch (error) {
    return { seen, error };
  }
  return { seen, error: null };
}

describe("client.turn() on a connection dropped mid-stream", () => {
  it("throws turn_interrupted (ApiError 502, with the key and the read's error as cause) after the events that came", async () => {
    const stream = droppingClient([
      { type: "turn_start", turnId: "t1" },
      { type: "delta", turnId: "t1", text: "Hel" },
    ]).turn("c1", { content: "hi" }, { idempotencyKey: "key-1" });
    const { seen, error } = await drain(stream);
    expect(seen).toEqual(["turn_start", "delta"]);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect((error as ApiError).body).toMatchObject({ error: { type: "turn_interrupted" } });
    expect((error as ApiError).idempotencyKey).toBe("key-1");
    expect((error as ApiError).cause).toBeInstanceOf(TypeError);
  });

  it("toolResults() throws the same", async () => {
    const stream = droppingClient([{ type: "turn_start", turnId: "t1" }]).toolResults(
      "c1",
      [{ tool_use_id: "tu1", content: "ok" }],
      { idempotencyKey: "key-2" },
    );
    const { error } = await drain(stream);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect((error as ApiError).idempotencyKey).toBe("key-2");
  });

  it("a turn whose turn_end came is over, whatever happens to the connection after it", async () => {
    const stream = droppingClient([
      { type: "turn_start", turnId: "t1" },
      { type: "turn_end", turnId: "t1", stop_reason: "end_turn", usage, timing },
    ]).turn("c1", { content: "hi" });
    const { seen, error } = await drain(stream);
    expect(seen).toEqual(["turn_start", "turn_end"]);
    expect(error).toBeNull();
  });
});

describe("client.turn() on a stream the server cut off", () => {
  const cutOff = [
    { type: "turn_start", turnId: "t1" },
    { type: "delta", turnId: "t1", text: "Hel" },
    { type: "error", turnId: "t1", error: { type: "turn_interrupted", message: "cut off" } },
    { type: "turn_end", turnId: "t1", stop_reason: "error", usage, timing },
  ];

  it("throws turn_interrupted (with the key) after yielding its error and turn_end", async () => {
    const stream = clientAnswering(cutOff).turn("c1", { content: "hi" }, { idempotencyKey: "key-3" });
    const { seen, error } = await drain(stream);
    expect(seen).toEqual(["turn_start", "delta", "error", "turn_end"]);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect((error as ApiError).body).toMatchObject({ error: { type: "turn_interrupted", message: "cut off" } });
    expect((error as ApiError).idempotencyKey).toBe("key-3");
  });

  it("a replayed outcome that was an interruption is the answer to the retry: it ends quietly", async () => {
    const replay = [{ type: "turn_start", turnId: "t1", replayed: true }, ...cutOff.slice(2)];
    const { seen, error } = await drain(clientAnswering(replay).turn("c1", { content: "hi" }));
    expect(seen).toEqual(["turn_start", "error", "turn_end"]);
    expect(error).toBeNull();
  });

  it("a turn that failed otherwise (model_error) is an outcome: it ends quietly", async () => {
    const failed = [
      cutOff[0],
      { type: "error", turnId: "t1", error: { type: "model_error", message: "no" } },
      cutOff[3],
    ];
    const { error } = await drain(clientAnswering(failed).turn("c1", { content: "hi" }));
    expect(error).toBeNull();
  });
});

/** A client whose SSE body sends a turn_start, then keepalive comments only (a long tool step). */
function quietClient() {
  const state = { cancelled: false, signal: undefined as AbortSignal | undefined | null };
  let timer: ReturnType<typeof setInterval> | undefined;
  const api = createClient({
    baseUrl: "http://api.test",
    key: "k",
    fetch: (async (_url: string, init?: RequestInit) => {
      state.signal = init?.signal;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(frame({ type: "turn_start", turnId: "t1" }));
            timer = setInterval(() => c.enqueue(enc.encode(": keepalive\n\n")), 50);
          },
          cancel() {
            state.cancelled = true;
            clearInterval(timer);
          },
        }),
        { headers: sseHeaders },
      );
    }) as typeof fetch,
  });
  return { api, state, stop: () => clearInterval(timer) };
}

const within = <T>(p: Promise<T>, ms = 2000) =>
  Promise.race([p, new Promise((r) => setTimeout(() => r(`still pending after ${ms} ms`), ms))]);

describe("leaving a quiet turn stream", () => {
  it("stream.return() while no event comes (keepalives only) ends the iteration and cancels the body", async () => {
    const { api, state, stop } = quietClient();
    const stream = api.turn("c1", { content: "hi" });
    expect((await stream.next()).value).toMatchObject({ type: "turn_start" });
    const pending = stream.next(); // the consumer waits for the next event
    void pending.catch(() => {});
    // A Stop button: leave the stream.
    const left = await within(stream.return(undefined).then(() => "returned"));
    stop();
    expect(left).toBe("returned");
    expect(state.cancelled).toBe(true);
    // The waiting next() ends quietly, not with turn_interrupted.
    expect(await within(pending)).toMatchObject({ done: true });
  });

  it("an aborted signal ends a waiting iteration with the abort's reason and cancels the body", async () => {
    const { api, state, stop } = quietClient();
    const abort = new AbortController();
    const stream = api.turn("c1", { content: "hi" }, { signal: abort.signal });
    expect((await stream.next()).value).toMatchObject({ type: "turn_start" });
    const pending = stream.next().then(
      () => "resolved",
      (e: unknown) => e,
    );
    abort.abort(new Error("stopped by the user"));
    const outcome = await within(pending);
    stop();
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe("stopped by the user");
    expect(state.cancelled).toBe(true);
    // fetch was given a signal that follows the caller's.
    expect(state.signal?.aborted).toBe(true);
  });

  it("request() passes its signal to fetch", async () => {
    let given: AbortSignal | null | undefined;
    const api = createClient({
      baseUrl: "http://api.test",
      key: "k",
      fetch: (async (_url: string, init?: RequestInit) => {
        given = init?.signal;
        return Response.json({ data: [], next: null });
      }) as typeof fetch,
    });
    const abort = new AbortController();
    await api.request("GET /v1/conversations", { signal: abort.signal });
    expect(given).toBe(abort.signal);
  });
});
