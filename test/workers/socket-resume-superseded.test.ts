// A socket that resumes (`/ws?after=<seq>`) after a regenerate it missed is told, before
// `resumed`, that its exchange was replaced: the `exchange_superseded` frame a connected socket
// got (durable-objects/conversation/sockets.ts `resume`), so a client never keeps showing a reply
// that no longer counts.
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../client/socket";
import { api, connectSocket, createConversation, transcript } from "./helpers";

type Socket = Awaited<ReturnType<typeof connectSocket>> & { ws: WebSocket };
const connect = async (id: string, query = ""): Promise<Socket> =>
  (await connectSocket(`/v1/conversations/${id}/ws${query}`, { authorization: "Bearer dev-local-key" })) as Socket;

/** The frames a resuming socket got before its `resumed`. */
async function catchUp(id: string, after: number): Promise<ServerFrame[]> {
  const s = await connect(id, `?after=${after}`);
  const resumed = await s.next((e) => e.type === "resumed");
  s.ws.close();
  return s.events.slice(0, s.events.indexOf(resumed));
}

describe("a socket resuming after a regenerate it missed", () => {
  it("gets the exchange_superseded a connected socket got, before resumed; not when its cursor is past the copy", async () => {
    const id = await createConversation();
    const first = await connect(id, "?after=0");
    await first.next((e) => e.type === "resumed");
    first.ws.send(JSON.stringify({ type: "send", content: "Name a lake.\n@reply-chars 60" }));
    await first.next((e) => e.type === "turn_end");
    first.ws.close();
    // A socket that stays connected sees the regenerate as it happens.
    const live = await connect(id);
    expect((await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true })).status).toBe(200);
    const heard = await live.next((e) => e.type === "exchange_superseded");
    live.ws.close();
    const t = await transcript(id);
    expect(t.map((m) => m.seq)).toEqual([1, 2, 3, 4]);

    const before = await catchUp(id, 2);
    expect(before.map((e) => (e.type === "message" ? `message ${e.message.seq}` : e.type))).toEqual([
      "message 3",
      "message 4",
      "exchange_superseded",
    ]);
    const told = before[2];
    expect(told).toEqual({
      type: "exchange_superseded",
      turnId: "resume",
      fromSeq: 1,
      toSeq: 2,
      messageIds: [t[0].id, t[1].id],
      supersededBy: t[2].id,
    });
    // The same facts as the live frame; only its turnId is the catch-up's.
    expect({ ...told, turnId: "" }).toEqual({ ...heard, turnId: "" });
    // A cursor before the exchange gets it too (its messages come marked as well).
    expect((await catchUp(id, 0)).filter((e) => e.type === "exchange_superseded")).toEqual([told]);
    // A socket that already had the copy (seq 3) saw the regenerate live: nothing to tell.
    expect((await catchUp(id, 3)).filter((e) => e.type === "exchange_superseded")).toEqual([]);
    expect((await catchUp(id, 4)).filter((e) => e.type === "exchange_superseded")).toEqual([]);
  });
});
