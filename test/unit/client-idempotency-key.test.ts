// The typed client's turn requests always carry an Idempotency-Key: the caller's, or a fresh one
// per call, named on the returned stream and on any ApiError it throws, so a retry can reuse it.
import { describe, expect, it } from "vitest";
import { ApiError, createClient, type TurnStream } from "../../client";

/** A client whose every answer is a 409 idempotency_in_progress; `sent` collects the keys it was sent. */
function refusingClient() {
  const sent: (string | null)[] = [];
  const client = createClient({
    baseUrl: "http://api.test",
    key: "k",
    fetch: (async (_input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Headers(init?.headers).get("idempotency-key"));
      return Response.json(
        { error: { type: "idempotency_in_progress", message: "still running" } },
        { status: 409, headers: { "retry-after": "1" } },
      );
    }) as typeof fetch,
  });
  return { client, sent };
}

const thrown = async (stream: TurnStream): Promise<ApiError> => {
  try {
    await stream.next();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error("no error");
};

describe("the typed client's Idempotency-Key", () => {
  it("sends the caller's key with turn() and toolResults(), and names it on the stream and the error", async () => {
    const { client, sent } = refusingClient();
    const turn = client.turn("c1", { content: "hi" }, { idempotencyKey: "turn-1" });
    expect(turn.idempotencyKey).toBe("turn-1");
    const turnError = await thrown(turn);
    expect(turnError).toBeInstanceOf(ApiError);
    expect(turnError.status).toBe(409);
    expect(turnError.idempotencyKey).toBe("turn-1");
    expect(turnError.retryAfterSeconds).toBe(1);
    const tools = client.toolResults("c1", [{ tool_use_id: "call_1", content: "x" }], { idempotencyKey: "res-1" });
    expect((await thrown(tools)).idempotencyKey).toBe("res-1");
    expect(sent).toEqual(["turn-1", "res-1"]);
  });

  it("makes a fresh key per call when none is given (an empty one counts as none)", async () => {
    const { client, sent } = refusingClient();
    const streams = [
      client.turn("c1", { content: "hi" }),
      client.turn("c1", { content: "hi" }, { idempotencyKey: "" }),
      client.toolResults("c1", [{ tool_use_id: "call_1", content: "x" }]),
    ];
    const errors = [];
    for (const s of streams) errors.push(await thrown(s));
    const keys = streams.map((s) => s.idempotencyKey);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(keys).size).toBe(3);
    expect(sent).toEqual(keys);
    expect(errors.map((e) => e.idempotencyKey)).toEqual(keys);
  });

  it("names the key on a fetch that failed before any answer too (through the stream)", async () => {
    const client = createClient({
      baseUrl: "http://api.test",
      fetch: (async () => {
        throw new TypeError("network down");
      }) as typeof fetch,
    });
    const stream = client.turn("c1", { content: "hi" });
    await expect(stream.next()).rejects.toThrow("network down");
    expect(stream.idempotencyKey).toMatch(/^[0-9a-f]{32}$/);
  });
});
