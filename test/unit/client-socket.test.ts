// The typed client's websocket (client/socket.ts) against a scripted server: a resume that leaves
// messages to page, the cursor of a socket opened without one (its first connection asks from it), a running turn streamed again after
// a resume, and a close the caller can see.
import { describe, expect, it } from "vitest";
import { type Message, createClient } from "../../client";
import { ConversationSocket, type ServerFrame } from "../../client/socket";

/** A websocket the test plays the server of. */
class FakeSocket extends EventTarget {
  readonly sent: string[] = [];
  private ended = false;
  constructor(readonly url: string) {
    super();
  }
  send(data: string) {
    this.sent.push(data);
  }
  /** A frame from the server. */
  emit(frame: unknown) {
    this.dispatchEvent(Object.assign(new Event("message"), { data: JSON.stringify(frame) }));
  }
  close(code = 1000, reason = "") {
    if (this.ended) return;
    this.ended = true;
    setTimeout(() => this.dispatchEvent(Object.assign(new Event("close"), { code, reason })), 0);
  }
}

const message = (seq: number): Message => ({
  id: `msg_${seq}`,
  seq,
  role: seq % 2 ? "user" : "assistant",
  content: [{ type: "text", text: `m${seq}` }],
  createdAt: "2026-01-01T00:00:00.000Z",
});
const resumed = (f: { after: number; through: number; lastSeq: number; more: boolean; turnsInFlight?: number }) => ({
  type: "resumed",
  turnsInFlight: 0,
  ...f,
});
const seqs = (frames: ServerFrame[]) => frames.flatMap((f) => (f.type === "message" ? [f.message.seq] : []));
const deltaText = (frames: ServerFrame[], turnId: string) =>
  frames.map((f) => (f.type === "delta" && f.turnId === turnId ? f.text : "")).join("");

/** A client whose HTTP answers come from `transcript`/`lastSeq` and whose sockets are FakeSockets. */
function fakeApi(opts: { transcript: Message[]; lastSeq: number | null; pageSize?: number }) {
  const sockets: FakeSocket[] = [];
  const requests: string[] = [];
  const fetch = async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    requests.push(`${url.pathname}${url.search}`);
    if (url.pathname === "/v1/conversations/c1" && opts.lastSeq === null)
      return Response.json({ error: { type: "authentication_error", message: "no key" } }, { status: 401 });
    if (url.pathname === "/v1/conversations/c1")
      return Response.json({ id: "c1", lastSeq: opts.lastSeq, messageCount: opts.lastSeq });
    if (url.pathname === "/v1/conversations/c1/messages") {
      const after = Number(url.searchParams.get("after") ?? url.searchParams.get("cursor") ?? 0);
      const limit = Math.min(Number(url.searchParams.get("limit") ?? 100), opts.pageSize ?? 100);
      const data = opts.transcript.filter((m) => m.seq > after).slice(0, limit);
      const next = data.length === limit && data.at(-1)!.seq < opts.transcript.at(-1)!.seq ? data.at(-1)!.seq : null;
      return Response.json({ data, next });
    }
    return Response.json({ error: { type: "not_found", message: "no" } }, { status: 404 });
  };
  const api = createClient({
    baseUrl: "http://api.test",
    key: "k",
    fetch: fetch as typeof globalThis.fetch,
    webSocket: async (url) => {
      const ws = new FakeSocket(url);
      sockets.push(ws);
      return ws as unknown as WebSocket;
    },
  });
  return { api, sockets, requests };
}

describe("client socket", () => {
  it("pages the messages a resume left out (more: true) before live frames, nothing lost or twice", async () => {
    // The server saved 1..6 when the socket resumed from 0; it sends 1..3 and says more; 7 is saved just after.
    const transcript = [1, 2, 3, 4, 5, 6, 7].map(message);
    const { api, sockets, requests } = fakeApi({ transcript, lastSeq: 6, pageSize: 2 });
    const s = await api.socket("c1", { after: 0 });
    expect(new URL(sockets[0].url).searchParams.get("after")).toBe("0");
    for (const seq of [1, 2, 3]) sockets[0].emit({ type: "message", turnId: "resume", message: message(seq) });
    sockets[0].emit(resumed({ after: 0, through: 3, lastSeq: 6, more: true }));
    sockets[0].emit({ type: "message", turnId: "turn_x", message: message(7) });
    await s.next((f) => f.type === "message" && f.message.seq === 7);
    expect(seqs(s.frames)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(s.lastSeq).toBe(7);
    // Paged with the client's own paging, from the resume's `through`.
    expect(requests.some((r) => r.startsWith("/v1/conversations/c1/messages?cursor=3"))).toBe(true);
    // The paged messages come before the resumed frame and the live ones.
    expect(s.frames.map((f) => f.type)).toEqual([...Array(6).fill("message"), "resumed", "message"]);
    s.close();
  });

  it("puts the paged messages before the running turn's resumed frames", async () => {
    const transcript = [1, 2, 3, 4].map(message);
    const { api, sockets } = fakeApi({ transcript, lastSeq: 4 });
    const s = await api.socket("c1", { after: 0 });
    sockets[0].emit({ type: "message", turnId: "resume", message: message(1) });
    sockets[0].emit({ type: "message", turnId: "resume", message: message(2) });
    sockets[0].emit({ type: "turn_start", turnId: "t1", resumed: true });
    sockets[0].emit({ type: "delta", turnId: "t1", text: "so far" });
    sockets[0].emit(resumed({ after: 0, through: 2, lastSeq: 4, more: true, turnsInFlight: 1 }));
    await s.next((f) => f.type === "resumed");
    expect(s.frames.map((f) => (f.type === "message" ? f.message.seq : f.type))).toEqual([
      1,
      2,
      3,
      4,
      "turn_start",
      "delta",
      "resumed",
    ]);
    s.close();
  });

  it("a socket opened without a cursor resumes from the conversation's lastSeq, not from 0", async () => {
    const { api, sockets } = fakeApi({ transcript: [1, 2, 3].map(message), lastSeq: 3 });
    const s = await api.socket("c1");
    // The first connection asks from the learned cursor, so what is saved while it connects comes too.
    expect(new URL(sockets[0].url).searchParams.get("after")).toBe("3");
    await s.resume();
    expect(new URL(sockets[1].url).searchParams.get("after")).toBe("3");
    s.close();
  });

  it("without a way to learn the cursor, resume() reconnects without one", async () => {
    const sockets: FakeSocket[] = [];
    const s = await ConversationSocket.open({
      url: async () => "ws://api.test/v1/conversations/c1/ws",
      open: async (url) => {
        sockets.push(new FakeSocket(url));
        return sockets.at(-1) as unknown as WebSocket;
      },
    });
    await s.resume();
    expect(new URL(sockets[1].url).searchParams.has("after")).toBe(false);
    s.close();
  });

  it("a keyless socket (a ticket-only client), whose cursor lookup cannot tell, still opens and resumes without a cursor", async () => {
    const { api, sockets } = fakeApi({ transcript: [], lastSeq: null });
    const s = await api.as("").socket("c1");
    await s.resume();
    expect(new URL(sockets[1].url).searchParams.has("after")).toBe(false);
    s.close();
  });

  it("a running turn streamed again after a resume is not doubled", async () => {
    const { api, sockets } = fakeApi({ transcript: [1, 2].map(message), lastSeq: 2 });
    const s = await api.socket("c1");
    sockets[0].emit(resumed({ after: 2, through: 2, lastSeq: 2, more: false }));
    sockets[0].emit({ type: "message", turnId: "t1", message: message(3) });
    sockets[0].emit({ type: "turn_start", turnId: "t2" });
    sockets[0].emit({ type: "delta", turnId: "t2", text: "Hello" });
    await s.next((f) => f.type === "delta");
    const seen: ServerFrame[] = [];
    const iterating = (async () => {
      for await (const f of s) {
        seen.push(f);
        if (f.type === "turn_end") return;
      }
    })();
    await s.resume();
    expect(new URL(sockets[1].url).searchParams.get("after")).toBe("3");
    sockets[1].emit({ type: "turn_start", turnId: "t2", resumed: true });
    sockets[1].emit({ type: "delta", turnId: "t2", text: "Hello" });
    sockets[1].emit(resumed({ after: 3, through: 3, lastSeq: 3, more: false, turnsInFlight: 1 }));
    sockets[1].emit({ type: "delta", turnId: "t2", text: " world" });
    sockets[1].emit({ type: "turn_end", turnId: "t2", stop_reason: "end_turn" });
    await s.next((f) => f.type === "turn_end");
    expect(deltaText(s.frames, "t2")).toBe("Hello world");
    await iterating;
    // The iterator yielded every frame once, the resumed turn_start (its cue to start over) included.
    expect(seen.map((f) => f.type)).toEqual([
      "message",
      "turn_start",
      "delta",
      "turn_start",
      "delta",
      "resumed",
      "delta",
      "turn_end",
    ]);
    s.close();
  });

  it("shows the close code and next() rejects at once when the socket closes", async () => {
    const { api, sockets } = fakeApi({ transcript: [], lastSeq: 0 });
    const s = await api.socket("c1");
    sockets[0].emit({
      type: "error",
      turnId: null,
      error: { type: "authentication_error", message: "revoked" },
    });
    sockets[0].close(1008, "key revoked");
    const started = Date.now();
    await expect(s.next((f) => f.type === "turn_end", 5_000)).rejects.toThrow(/1008 key revoked/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(s.closeCode).toBe(1008);
    expect(s.closeReason).toBe("key revoked");
    const rest: string[] = [];
    for await (const f of s) rest.push(f.type);
    expect(rest).toEqual(["error"]);
  });
});
