// The typed client's websocket (client/socket.ts) against the real chat worker when resume() runs
// into another resume, a catch-up still being paged, or a close(): it keeps one live connection,
// delivers every message once, and nothing arrives after close().
import { describe, expect, it } from "vitest";
import { createClient } from "../../client";
import type { ConversationSocket, ServerFrame } from "../../client/socket";
import { api, connectSocket, createConversation, DEV_KEY, importAlternating, newTenant, worker } from "./helpers";

const OPEN = 1;
const seqs = (frames: ServerFrame[]) => frames.flatMap((f) => (f.type === "message" ? [f.message.seq] : []));
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * The client with its HTTP and websockets going through the worker; every websocket it opened is
 * kept in `opened`. `onFetch` sees each request first (to act while one is under way).
 */
function clientFor(opts: { key?: string; onFetch?: (req: Request) => void } = {}) {
  const opened: WebSocket[] = [];
  const client = createClient({
    baseUrl: "http://chat.test",
    key: opts.key ?? DEV_KEY,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(String(input), init);
      opts.onFetch?.(req);
      return worker().fetch(req);
    }) as typeof fetch,
    webSocket: async (url, init) => {
      const res = await worker().fetch(
        new Request(url.replace(/^ws/, "http"), { headers: { upgrade: "websocket", ...init?.headers } }),
      );
      if (!res.webSocket) throw new Error(`websocket refused: ${res.status} ${await res.text()}`);
      res.webSocket.accept();
      opened.push(res.webSocket);
      return res.webSocket;
    },
  });
  return { client, opened };
}

/** Runs a turn over HTTP and waits until another socket on the conversation saw it end. */
async function turnSeenBy(id: string, witness: Awaited<ReturnType<typeof connectSocket>>) {
  const ends = witness.events.filter((f) => f.type === "turn_end").length;
  const r = await api("POST", `/v1/conversations/${id}/messages`, { content: "hi\n@reply-chars 40" });
  expect(r.status, r.text).toBe(200);
  await witness.next((f) => f.type === "turn_end" && witness.events.filter((g) => g.type === "turn_end").length > ends);
  // The client's sockets got the same frames at the same time: a moment for them to be handled.
  await new Promise((r) => setTimeout(r, 100));
}

describe("client socket resume() races", () => {
  it("two overlapping resume() calls share one reconnect: one live connection, each message once", async () => {
    const id = await createConversation();
    const witness = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    const { client, opened } = clientFor();
    const s = await client.socket(id);
    await Promise.all([s.resume(), s.resume()]);
    expect(opened).toHaveLength(2);
    expect(opened.filter((ws) => ws.readyState === OPEN)).toHaveLength(1);
    await turnSeenBy(id, witness);
    expect(seqs(s.frames)).toEqual([1, 2]);
    s.close();
    expect(opened.filter((ws) => ws.readyState === OPEN)).toHaveLength(0);
    const before = s.frames.length;
    await turnSeenBy(id, witness);
    expect(s.frames).toHaveLength(before);
    witness.ws?.close();
  });

  it("a resume() while a more: true catch-up is being paged delivers each message once, in order", async () => {
    const key = await newTenant();
    const id = await importAlternating(key, 520);
    let s: ConversationSocket | undefined;
    let resumed: Promise<void> | undefined;
    const { client, opened } = clientFor({
      key,
      // The first page of what the resume left out is being fetched (a slow network): resume() now.
      onFetch: (req) => {
        if (req.method === "GET" && new URL(req.url).pathname.endsWith("/messages") && s && !resumed)
          resumed = s.resume();
      },
    });
    s = await client.socket(id, { after: 0 });
    await s.next((f) => f.type === "resumed");
    expect(resumed).toBeDefined();
    await resumed;
    // The first connection's catch-up was delivered before the second connected, from past it.
    await s.next((f) => f.type === "resumed" && f.after === 520);
    expect(seqs(s.frames)).toEqual(upTo(520));
    expect(opened.filter((ws) => ws.readyState === OPEN)).toHaveLength(1);
    s.send({ type: "send", content: "one more\n@reply-chars 40" });
    await s.next((f) => f.type === "turn_end");
    expect(seqs(s.frames)).toEqual(upTo(522));
    expect(s.lastSeq).toBe(522);
    s.close();
  });

  it("a turn that ends while a catch-up is paged keeps its frames, turn_end included, across a resume()", async () => {
    const key = await newTenant();
    const id = await importAlternating(key, 520);
    // The first page of what the first connection's resume left out is held until the turn ended.
    let openGate!: () => void;
    const gate = new Promise<void>((r) => {
      openGate = r;
    });
    let pagingStarted!: () => void;
    const paging = new Promise<void>((r) => {
      pagingStarted = r;
    });
    const client = createClient({
      baseUrl: "http://chat.test",
      key,
      fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(String(input), init);
        if (req.method === "GET" && new URL(req.url).pathname.endsWith("/messages")) {
          pagingStarted();
          await gate;
        }
        return worker().fetch(req);
      }) as typeof fetch,
      webSocket: async (url, wsInit) => {
        const res = await worker().fetch(
          new Request(url.replace(/^ws/, "http"), { headers: { upgrade: "websocket", ...wsInit?.headers } }),
        );
        if (!res.webSocket) throw new Error(`websocket refused: ${res.status}`);
        res.webSocket.accept();
        return res.webSocket;
      },
    });
    const s = await client.socket(id, { after: 0 });
    await paging;
    // A turn runs and ends meanwhile: its live frames reach the first connection, which holds them.
    const r = await api("POST", `/v1/conversations/${id}/messages`, { content: "hi\n@reply-chars 40" }, { key });
    expect(r.status, r.text).toBe(200);
    await new Promise((res) => setTimeout(res, 200));
    const resumed = s.resume();
    openGate();
    await resumed;
    await s.next((f) => f.type === "turn_end");
    expect(s.frames.filter((f) => f.type === "turn_end")).toHaveLength(1);
    expect(seqs(s.frames)).toEqual(upTo(522));
    s.close();
  });

  it("close() while resume() connects leaves no connection open and nothing arrives after it", async () => {
    const id = await createConversation();
    const witness = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    const { client, opened } = clientFor();
    const s = await client.socket(id);
    const resuming = s.resume();
    s.close();
    await resuming;
    expect(opened.filter((ws) => ws.readyState === OPEN)).toHaveLength(0);
    await turnSeenBy(id, witness);
    expect(s.frames).toEqual([]);
    witness.ws?.close();
  });
});
