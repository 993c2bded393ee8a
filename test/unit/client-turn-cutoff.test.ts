// The typed client's turn(): an SSE stream that ends before the turn does (no turn_end, no
// requires_action, no error before turn_start) throws turn_interrupted after the events it brought,
// never a quiet end; a complete stream, a paused turn and a refusal before the start end quietly.
import { describe, expect, it } from "vitest";
import { ApiError, createClient, type TurnEvent } from "../../client";

const sse = (events: object[]) =>
  new Response(events.map((e) => `event: x\ndata: ${JSON.stringify(e)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream; charset=utf-8" },
  });
const clientAnswering = (events: object[]) =>
  createClient({ baseUrl: "http://api.test", key: "k", fetch: (async () => sse(events)) as typeof fetch });

/** The events yielded, and the error thrown at the end (null when the iteration ended quietly). */
async function drain(it: AsyncGenerator<TurnEvent>): Promise<{ seen: string[]; error: unknown }> {
  const seen: string[] = [];
  try {
    for await (const e of it) seen.push(e.type);
  } catch (error) {
    return { seen, error };
  }
  return { seen, error: null };
}

const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const timing = { serverMs: 1, modelMs: 1, queuedMs: 0 };

describe("client.turn() on a stream cut short", () => {
  it("throws turn_interrupted after yielding what came (turn_start and a delta, then the body ends)", async () => {
    const api = clientAnswering([
      { type: "turn_start", turnId: "t1" },
      { type: "delta", turnId: "t1", text: "Hel" },
    ]);
    const { seen, error } = await drain(api.turn("c1", { content: "hi" }));
    expect(seen).toEqual(["turn_start", "delta"]);
    expect(error).toBeInstanceOf(ApiError);
    const e = error as ApiError;
    expect(e.status).toBe(502);
    expect(e.body).toMatchObject({ error: { type: "turn_interrupted" } });
    // tool-results streams the same way.
    const tools = await drain(api.toolResults("c1", [{ tool_use_id: "call_1", content: "x" }]));
    expect((tools.error as ApiError).body).toMatchObject({ error: { type: "turn_interrupted" } });
  });

  it("throws the server's authentication_error (401) when it ended the stream for a revoked key", async () => {
    const api = clientAnswering([
      { type: "turn_start", turnId: "t1" },
      { type: "delta", turnId: "t1", text: "Hel" },
      { type: "error", turnId: "t1", error: { type: "authentication_error", message: "revoked" } },
    ]);
    const { seen, error } = await drain(api.turn("c1", { content: "hi" }));
    expect(seen).toEqual(["turn_start", "delta", "error"]);
    expect((error as ApiError).status).toBe(401);
    expect((error as ApiError).body).toMatchObject({ error: { type: "authentication_error" } });
  });

  it("ends quietly after turn_end, after requires_action, and after an error before turn_start", async () => {
    const ended = clientAnswering([
      { type: "turn_start", turnId: "t1" },
      { type: "delta", turnId: "t1", text: "Hello" },
      { type: "turn_end", turnId: "t1", stop_reason: "end_turn", usage, timing },
    ]);
    expect(await drain(ended.turn("c1", { content: "hi" }))).toEqual({
      seen: ["turn_start", "delta", "turn_end"],
      error: null,
    });
    const paused = clientAnswering([
      { type: "turn_start", turnId: "t1" },
      { type: "requires_action", turnId: "t1", calls: [], expiresAt: "2026-01-01T00:00:00.000Z" },
    ]);
    expect((await drain(paused.turn("c1", { content: "hi" }))).error).toBeNull();
    const refused = clientAnswering([
      { type: "error", turnId: "t1", error: { type: "rate_limited", message: "later" } },
    ]);
    expect((await drain(refused.turn("c1", { content: "hi" }))).error).toBeNull();
  });

  it("an error inside a started turn without its turn_end is still a cut stream", async () => {
    const api = clientAnswering([
      { type: "turn_start", turnId: "t1" },
      { type: "error", turnId: "t1", error: { type: "api_error", message: "x" } },
    ]);
    expect(((await drain(api.turn("c1", { content: "hi" }))).error as ApiError).body).toMatchObject({
      error: { type: "turn_interrupted" },
    });
  });
});
