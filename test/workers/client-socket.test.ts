// The typed client's websocket (client/) against the real chat worker: a resume of more than the
// server sends at once is paged to the end, a socket opened without a cursor resumes from the
// conversation's last seq, and the server's error frames match the document's SocketServerFrame.
import { describe, expect, it } from "vitest";
import { createClient } from "../../client";
import type { ServerFrame } from "../../client/socket";
import { socketServerFrameSchema } from "../../workers/chat/openapi/schemas";
import { api, connectSocket, createConversation, DEV_KEY, importAlternating, newTenant, worker } from "./helpers";

/** The client, its HTTP and its websockets going through the worker's fetch handler. */
const clientFor = (key = DEV_KEY) =>
  createClient({
    baseUrl: "http://chat.test",
    key,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
      worker().fetch(new Request(String(input), init))) as typeof fetch,
    webSocket: async (url, init) => {
      const res = await worker().fetch(
        new Request(url.replace(/^ws/, "http"), { headers: { upgrade: "websocket", ...init?.headers } }),
      );
      if (!res.webSocket) throw new Error(`websocket refused: ${res.status} ${await res.text()}`);
      res.webSocket.accept();
      return res.webSocket;
    },
  });
const seqs = (frames: ServerFrame[]) => frames.flatMap((f) => (f.type === "message" ? [f.message.seq] : []));

describe("the client's socket on the real server", () => {
  it("pages what a resume leaves out (more: true), then takes live messages: each once, in order", async () => {
    const key = await newTenant();
    const id = await importAlternating(key, 520);
    const s = await clientFor(key).socket(id, { after: 0 });
    const resumed = await s.next((f) => f.type === "resumed");
    expect(resumed).toMatchObject({ after: 0, through: 500, lastSeq: 520, more: true });
    expect(seqs(s.frames)).toEqual(Array.from({ length: 520 }, (_, i) => i + 1));
    s.send({ type: "send", content: "one more\n@reply-chars 40" });
    await s.next((f) => f.type === "turn_end");
    expect(seqs(s.frames)).toEqual(Array.from({ length: 522 }, (_, i) => i + 1));
    expect(s.lastSeq).toBe(522);
    s.close();
  });

  it("a socket opened without a cursor resumes from the conversation's last seq", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "hello\n@reply-chars 40" });
    const s = await clientFor().socket(id);
    expect(s.lastSeq).toBe(2);
    await s.resume();
    const resumed = await s.next((f) => f.type === "resumed");
    // Nothing was saved meanwhile: no history comes again.
    expect(resumed).toMatchObject({ after: 2, through: 2, lastSeq: 2, more: false });
    expect(seqs(s.frames)).toEqual([]);
    s.close();
  });

  it("sends error frames (turnId null when no turn) that the document's SocketServerFrame accepts", async () => {
    const id = await createConversation();
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    s.ws!.send("not json");
    s.ws!.send(JSON.stringify({ type: "tool_results", results: [{ tool_use_id: "call_x", content: "x" }] }));
    await s.next((e) => e.type === "error" && s.events.filter((f) => f.type === "error").length >= 2);
    const errors = s.events.filter((e) => e.type === "error");
    expect(errors).toHaveLength(2);
    for (const frame of errors) {
      expect(frame).toMatchObject({ turnId: null });
      const parsed = socketServerFrameSchema.safeParse(frame);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    }
    s.ws!.close();
  });
});
