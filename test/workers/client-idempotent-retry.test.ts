// The typed client's turn() and toolResults() always carry an Idempotency-Key (the caller's, or
// one made for the call, exposed on the stream and on the error it throws), so a stream cut after
// its first chunk can be sent again with that key to learn the turn's outcome: the first turn's
// answer again, never a second turn and never a 409 tool_results_conflict.
import { describe, expect, it } from "vitest";
import { ApiError, Client, type TurnEvent } from "../../client";
import { createConversation, DEV_KEY, transcript, worker } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** An answer whose body stops after its first chunk, as when the connection drops mid-stream. */
function cutAfterFirstChunk(res: Response): Response {
  if (!res.body) return res;
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const first = await reader.read();
      if (!first.done) controller.enqueue(first.value);
      await reader.cancel();
      controller.close();
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

/** A client through the worker's own fetch; `cut`: its answers lose all but their first chunk. */
const clientOf = (cut: boolean) =>
  new Client({
    baseUrl: "http://chat.test",
    key: DEV_KEY,
    fetch: async (input, init) => {
      const res = await worker().fetch(new Request(input as string, init));
      return cut ? cutAfterFirstChunk(res) : res;
    },
  });

/** The events yielded, and the error thrown at the end (null when the iteration ended quietly). */
async function drain(stream: AsyncGenerator<TurnEvent>): Promise<{ events: TurnEvent[]; error: unknown }> {
  const events: TurnEvent[] = [];
  try {
    for await (const e of stream) events.push(e);
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}

/** Sends again until the first turn is over (409 idempotency_in_progress while it runs). */
async function retryUntilOver(send: () => AsyncGenerator<TurnEvent>): Promise<TurnEvent[]> {
  for (let i = 0; i < 100; i++) {
    const { events, error } = await drain(send());
    if (error === null) return events;
    const busy =
      error instanceof ApiError && error.status === 409 && JSON.stringify(error.body).includes("in_progress");
    if (!busy) throw error;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the first turn never ended");
}

const interrupted = (error: unknown) => {
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(502);
  expect((error as ApiError).body).toMatchObject({ error: { type: "turn_interrupted" } });
  return error as ApiError;
};

async function pausedOnWeather(id: string): Promise<{ turnId: string; callId: string }> {
  const { events } = await drain(
    clientOf(false).turn(id, { content: `@tool get_weather {"city":"Lima"}`, tools: [weather] }),
  );
  const action = events.find((e) => e.type === "requires_action");
  if (action?.type !== "requires_action") throw new Error("the turn did not pause");
  return { turnId: action.turnId, callId: action.calls[0].id };
}

describe("the typed client's Idempotency-Key", () => {
  it("toolResults() takes one: a retry of a cut stream with it learns the outcome instead of a 409", async () => {
    const id = await createConversation();
    const { turnId, callId } = await pausedOnWeather(id);
    const results = [{ tool_use_id: callId, content: "sunny, 24 C" }];
    const cut = await drain(clientOf(true).toolResults(id, results, { idempotencyKey: "results-cut-1" }));
    const error = interrupted(cut.error);
    const again = await retryUntilOver(() =>
      clientOf(false).toolResults(id, results, { idempotencyKey: "results-cut-1" }),
    );
    expect(again[0]).toMatchObject({ type: "turn_start", turnId, replayed: true });
    expect(again.at(-1)).toMatchObject({ type: "turn_end", turnId, stop_reason: "end_turn" });
    // One resumed turn: the paused exchange, the results and the reply, nothing twice.
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(error.idempotencyKey).toBe("results-cut-1");
  });

  it("toolResults() without a key sends one of its own, named on the stream and on the error", async () => {
    const id = await createConversation();
    const { turnId, callId } = await pausedOnWeather(id);
    const results = [{ tool_use_id: callId, content: "rain" }];
    const stream = clientOf(true).toolResults(id, results);
    expect(stream.idempotencyKey).toMatch(/^[\x21-\x7e]{16,}$/);
    const error = interrupted((await drain(stream)).error);
    expect(error.idempotencyKey).toBe(stream.idempotencyKey);
    const again = await retryUntilOver(() =>
      clientOf(false).toolResults(id, results, { idempotencyKey: error.idempotencyKey }),
    );
    expect(again.at(-1)).toMatchObject({ type: "turn_end", turnId, stop_reason: "end_turn" });
    expect(await transcript(id)).toHaveLength(4);
  });

  it("turn() without a key sends one of its own: a retry of a cut stream with it runs no second turn", async () => {
    const id = await createConversation();
    const stream = clientOf(true).turn(id, { content: "hello, cut short" });
    const error = interrupted((await drain(stream)).error);
    expect(error.idempotencyKey).toBe(stream.idempotencyKey);
    const again = await retryUntilOver(() =>
      clientOf(false).turn(id, { content: "hello, cut short" }, { idempotencyKey: error.idempotencyKey }),
    );
    expect(again[0]).toMatchObject({ type: "turn_start", replayed: true });
    expect(again.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant"]);
    // Each call makes its own key: two sends are two turns.
    const a = clientOf(false).turn(id, { content: "one" });
    const b = clientOf(false).turn(id, { content: "one" });
    expect(a.idempotencyKey).not.toBe(b.idempotencyKey);
    await drain(a);
    await drain(b);
    expect(await transcript(id)).toHaveLength(6);
  });
});
