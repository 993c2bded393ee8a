// The typed client's websocket (client/) against the real chat worker: a socket opened without a
// cursor connects from the conversation's last seq it learned, so messages saved while it connects
// arrive as its catch-up (then `resumed`) instead of never.
import { describe, expect, it } from "vitest";
import { createClient } from "../../client";
import type { ServerFrame } from "../../client/socket";
import { api, createConversation, DEV_KEY, worker } from "./helpers";

const seqs = (frames: ServerFrame[]) => frames.flatMap((f) => (f.type === "message" ? [f.message.seq] : []));

describe("a client socket opened without a cursor", () => {
  it("gets the messages saved while it connects (another client's turn), each once, in order", async () => {
    const id = await createConversation();
    const first = await api("POST", `/v1/conversations/${id}/messages`, { content: "hello\n@reply-chars 40" });
    expect(first.status, first.text).toBe(200);
    let raced = false;
    const client = createClient({
      baseUrl: "http://chat.test",
      key: DEV_KEY,
      fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
        worker().fetch(new Request(String(input), init))) as typeof fetch,
      webSocket: async (url, init) => {
        // While this socket opens (after it learned lastSeq 2), another client's turn saves seqs 3 and 4.
        if (!raced) {
          raced = true;
          const other = await api("POST", `/v1/conversations/${id}/messages`, {
            content: "meanwhile\n@reply-chars 40",
          });
          expect(other.status, other.text).toBe(200);
        }
        const res = await worker().fetch(
          new Request(url.replace(/^ws/, "http"), { headers: { upgrade: "websocket", ...init?.headers } }),
        );
        if (!res.webSocket) throw new Error(`websocket refused: ${res.status} ${await res.text()}`);
        res.webSocket.accept();
        return res.webSocket;
      },
    });
    const s = await client.socket(id);
    s.send({ type: "send", content: "mine\n@reply-chars 40" });
    await s.next((f) => f.type === "turn_end");
    await s.resume();
    await s.next((f) => f.type === "resumed" && f.after === 6);
    expect(seqs(s.frames)).toEqual([3, 4, 5, 6]);
    // The first connection's catch-up came before the socket's own turn; its `resumed` frame is not shown.
    expect(s.frames.filter((f) => f.type === "resumed")).toHaveLength(1);
    expect(s.frames[0]).toMatchObject({ type: "message", message: { seq: 3 } });
    expect(s.lastSeq).toBe(6);
    s.close();
  });
});
