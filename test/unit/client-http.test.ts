// The typed client's HTTP side: ApiError keeps Retry-After, and the SSE reader (client/sse.ts)
// splits lines on CRLF, LF or CR across chunks and cancels the body when left early.
import { describe, expect, it } from "vitest";
import { ApiError, createClient } from "../../client";
import { sseData } from "../../client/sse";

const encoder = new TextEncoder();
const streamOf = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(encoder.encode(chunk));
      c.close();
    },
  });
const all = async (body: ReadableStream<Uint8Array>) => {
  const out: unknown[] = [];
  for await (const d of sseData(body)) out.push(d);
  return out;
};

describe("ApiError", () => {
  const refusing = (status: number, retryAfter: string) =>
    createClient({
      baseUrl: "http://api.test",
      key: "k",
      fetch: (async () =>
        Response.json(
          { error: { type: status === 429 ? "rate_limited" : "turn_in_progress", message: "later" } },
          { status, headers: { "retry-after": retryAfter } },
        )) as typeof fetch,
    });
  const caught = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      return e as ApiError;
    }
    throw new Error("no error");
  };

  it("keeps the Retry-After of a refused turn, tool results and messages page", async () => {
    const turn = await caught(refusing(429, "7").turn("c1", { content: "hi" }).next());
    expect(turn).toBeInstanceOf(ApiError);
    expect(turn.status).toBe(429);
    expect(turn.retryAfterSeconds).toBe(7);
    expect(turn.headers?.get("retry-after")).toBe("7");
    const tools = await caught(refusing(409, "3").toolResults("c1", []).next());
    expect(tools.retryAfterSeconds).toBe(3);
    const page = await caught(refusing(429, "11").messages("c1").next());
    expect(page.retryAfterSeconds).toBe(11);
  });
});

describe("sseData", () => {
  it("joins a CRLF split across two chunks", async () => {
    expect(await all(streamOf(['event: delta\r\ndata: {"a":1}\r', '\n\r\ndata: {"a":2}\r\n\r\n']))).toEqual([
      { a: 1 },
      { a: 2 },
    ]);
    // Split between the two line endings of the blank line too.
    expect(await all(streamOf(['data: {"b":1}\r\n\r', "\n", 'data: {"b":2}\r\n\r\n']))).toEqual([{ b: 1 }, { b: 2 }]);
  });

  it("takes lone CR line endings", async () => {
    expect(await all(streamOf(['event: delta\rdata: {"c":1}\r\rdata: {"c":2}\r', "\r"]))).toEqual([{ c: 1 }, { c: 2 }]);
  });

  it("takes LF line endings and multi-line data", async () => {
    expect(await all(streamOf(["data: [1,\ndata: 2]\n\n", "data: 3\n", "\n"]))).toEqual([[1, 2], 3]);
  });

  it("cancels the body when the iteration is left early", async () => {
    let cancelled = false;
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(encoder.encode(`data: ${n++}\n\n`));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const d of sseData(body)) if (d === 1) break;
    expect(cancelled).toBe(true);
  });
});
