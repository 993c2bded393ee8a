// An MCP server's answers counted as they are read: one message (a JSON body, one event of an
// event stream) at most the cap, the rest never read; a stream may carry any number of messages.
import { describe, expect, it } from "vitest";
import { capMessages, McpMessageTooLarge } from "../../services/mcp/message-cap";

const enc = new TextEncoder();
/** A response whose body is `chunks`, noting how many of them were pulled. */
function answer(chunks: string[], headers: Record<string, string>) {
  const pulled = { n: 0, cancelled: false };
  let i = 0;
  const source: UnderlyingSource<Uint8Array> = {
    pull(c) {
      if (i === chunks.length) return c.close();
      pulled.n++;
      c.enqueue(enc.encode(chunks[i++]));
    },
    cancel() {
      pulled.cancelled = true;
    },
  };
  // No read-ahead: a chunk is pulled only when the reader asks for one.
  const body = new ReadableStream<Uint8Array>(source, { highWaterMark: 0 });
  return { res: new Response(body, { headers }), pulled };
}
const SSE = { "content-type": "text/event-stream" };
const JSON_TYPE = { "content-type": "application/json" };

describe("capMessages", () => {
  it("passes a body within the cap through unchanged", async () => {
    const seen: unknown[] = [];
    const { res } = answer(['{"jsonrpc":', '"2.0"}'], JSON_TYPE);
    expect(await capMessages(res, 20, (e) => seen.push(e)).text()).toBe('{"jsonrpc":"2.0"}');
    expect(seen).toEqual([]);
  });

  it("errors a JSON body once it passes the cap, and reads nothing after that", async () => {
    const seen: unknown[] = [];
    const { res, pulled } = answer(["x".repeat(8), "x".repeat(8), "x".repeat(8), "never read"], JSON_TYPE);
    await expect(capMessages(res, 20, (e) => seen.push(e)).text()).rejects.toBeInstanceOf(McpMessageTooLarge);
    expect(seen).toHaveLength(1);
    expect((seen[0] as Error).message).toMatch(/passed 20 bytes/);
    expect(pulled).toEqual({ n: 3, cancelled: true });
  });

  it("refuses a body declared larger than the cap before reading it", () => {
    const seen: unknown[] = [];
    const { res, pulled } = answer(["{}"], { ...JSON_TYPE, "content-length": "21" });
    expect(() => capMessages(res, 20, (e) => seen.push(e))).toThrow(McpMessageTooLarge);
    expect(seen).toHaveLength(1);
    expect(pulled.n).toBe(0);
  });

  it("counts an event stream per event, whichever line ends it uses", async () => {
    const event = (eol: string) => `data: ${"a".repeat(10)}${eol}${eol}`;
    for (const eol of ["\n", "\r\n", "\r"]) {
      const many = Array.from({ length: 50 }, () => event(eol));
      const { res } = answer(many, SSE);
      expect(await capMessages(res, 20, () => undefined).text(), JSON.stringify(eol)).toBe(many.join(""));
    }
    // An event split across chunks, its blank line too, still counts as one.
    const { res } = answer(["data: aaaa", "aaaaaa\r", "\n\r", "\ndata: bbbbbbbbbb\n", "\n"], SSE);
    expect(await capMessages(res, 20, () => undefined).text()).toBe("data: aaaaaaaaaa\r\n\r\ndata: bbbbbbbbbb\n\n");
  });

  it("errors an event that passes the cap, however its lines are split", async () => {
    for (const chunks of [
      ["data: ", "b".repeat(30), "\n\n"],
      ["data: bbbbbbbb\n", "data: bbbbbbbb\n", "data: bbbbbbbb\n\n"],
      ["data: b\r\n\r\ndata: ", "c".repeat(25)],
    ]) {
      const seen: unknown[] = [];
      const { res } = answer(chunks, SSE);
      await expect(capMessages(res, 20, (e) => seen.push(e)).text(), JSON.stringify(chunks)).rejects.toBeInstanceOf(
        McpMessageTooLarge,
      );
      expect(seen).toHaveLength(1);
    }
  });
});
