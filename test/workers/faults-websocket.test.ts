// Fault: a websocket drops mid-stream and the client reconnects with `?after=<last seq it saw>`.
// It must end up with every saved message exactly once, byte-identical to the transcript, and the
// conversation must take the next turn.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, transcript } from "./helpers";
import { ofType } from "../blocks";
import type { ServerFrame } from "../../client/socket";

type Socket = Awaited<ReturnType<typeof connectSocket>> & { ws: WebSocket };

const connect = async (id: string, query = ""): Promise<Socket> =>
  (await connectSocket(`/v1/conversations/${id}/ws${query}`, { authorization: "Bearer dev-local-key" })) as Socket;

/** A client that keeps the messages it was sent by seq, dropping its socket after `dropAfter` events. */
class ResumingClient {
  readonly messages = new Map<number, Extract<ServerFrame, { type: "message" }>["message"]>();
  duplicates = 0;
  lastSeq = 0;
  constructor(private readonly id: string) {}

  take(events: ServerFrame[]): void {
    for (const e of events) {
      if (e.type !== "message") continue;
      if (this.messages.has(e.message.seq)) this.duplicates++;
      this.messages.set(e.message.seq, e.message);
      this.lastSeq = Math.max(this.lastSeq, e.message.seq);
    }
  }

  /** Sends one turn, drops the socket after `dropAfter` frames, reconnects and waits until nothing is in flight. */
  async turn(content: string, dropAfter: number): Promise<void> {
    const first = await connect(this.id, `?after=${this.lastSeq}`);
    await first.next((e) => e.type === "resumed");
    first.ws.send(JSON.stringify({ type: "send", content }));
    const start = first.events.findIndex((e) => e.type === "resumed") + 1;
    // Drop after `dropAfter` frames of the turn (or at its end, if it is shorter than that).
    await first.next((e) => first.events.length - start >= dropAfter || e.type === "turn_end");
    const seen = first.events.slice(0, start + dropAfter);
    first.ws.close(1001, "network drop");
    this.take(seen);
    for (;;) {
      const again = await connect(this.id, `?after=${this.lastSeq}`);
      const resumed = await again.next((e) => e.type === "resumed");
      expect(resumed.after).toBe(this.lastSeq);
      if (resumed.turnsInFlight > 0) await again.next((e) => e.type === "turn_end");
      this.take(again.events);
      again.ws.close(1000);
      if (resumed.turnsInFlight === 0) return;
    }
  }
}

describe("fault: a websocket drops mid-stream and the client resumes", () => {
  it("resumes without a duplicate or a gap, for drops at 4 points of a turn (4 injections)", async () => {
    const id = await createConversation();
    const client = new ResumingClient(id);
    // Drop after the turn_start, inside the deltas, after the first saved message, deep in a tool turn.
    const drops = [1, 4, 2, 8];
    const prompts = [
      "@reply-chars 6000",
      "drop in the deltas\n@reply-chars 9000",
      "after the user message\n@reply-chars 3000",
      'a tool turn\n@tool conversation_read {"from_seq":1,"to_seq":2}',
    ];
    for (let i = 0; i < drops.length; i++) await client.turn(prompts[i], drops[i]);
    const t = await transcript(id);
    expect(client.duplicates).toBe(0);
    expect([...client.messages.keys()].sort((a, b) => a - b)).toEqual(t.map((m) => m.seq));
    for (const m of t) expect(JSON.stringify(client.messages.get(m.seq))).toBe(JSON.stringify(m));
    const users = t
      .filter((m) => m.role === "user" && m.content[0].type === "text")
      .map((m) => ofType(m.content[0], "text").text);
    expect(users).toEqual(prompts);
    const next = await api("POST", `/v1/conversations/${id}/messages`, { content: "still taking turns" });
    expect(next.status).toBe(200);
    expect(next.json.messages[0].seq).toBe(t.length + 1);
    console.log(
      `[faults] websocket drops injected: ${drops.length}; messages resumed: ${t.length}; duplicates: ${client.duplicates}`,
    );
  });

  it("catches up a fresh socket from seq 0, leaves a plain socket alone, and refuses a bad cursor", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "one" });
    const s = await connect(id, "?after=0");
    const resumed = await s.next((e) => e.type === "resumed");
    expect(resumed).toMatchObject({ after: 0, through: 2, lastSeq: 2, more: false, turnsInFlight: 0 });
    expect(s.events.filter((e) => e.type === "message").map((e) => e.message.seq)).toEqual([1, 2]);
    s.ws.close();
    const plain = await connect(id);
    plain.ws.send(JSON.stringify({ type: "ping" }));
    await plain.next((e) => e.type === "pong");
    expect(plain.events.some((e) => e.type === "resumed")).toBe(false);
    plain.ws.close();
    const bad = await connectSocket(`/v1/conversations/${id}/ws?after=-1`, { authorization: "Bearer dev-local-key" });
    expect(bad.status).toBe(400);
  });
});
