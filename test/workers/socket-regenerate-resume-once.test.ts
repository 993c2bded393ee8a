// A socket resuming while a regenerate still streams is told of that regenerate once at most:
// once when its cursor is before the copy (the catch-up derives it from the head), never when its
// cursor is at or past the copy (it saw it live). The running turn's replayed part
// (durable-objects/conversation/live-turn.ts) must not tell it again.
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../client/socket";
import { api, connectSocket, createConversation, transcript } from "./helpers";

type Socket = Awaited<ReturnType<typeof connectSocket>> & { ws: WebSocket };
const connect = async (id: string, query = ""): Promise<Socket> =>
  (await connectSocket(`/v1/conversations/${id}/ws${query}`, { authorization: "Bearer dev-local-key" })) as Socket;

const superseded = (frames: ServerFrame[]) => frames.filter((f) => f.type === "exchange_superseded");

describe("a socket resuming during a regenerate", () => {
  it("gets exchange_superseded once when its cursor is before the copy, and not at all when past it", async () => {
    const id = await createConversation();
    const first = await api("POST", `/v1/conversations/${id}/messages`, {
      content: "Name a lake.\n@reply-chars 400\n@stream-pace 150",
    });
    expect(first.status).toBe(200);
    const live = await connect(id);
    const regen = api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    const heard = await live.next((e) => e.type === "exchange_superseded");
    await live.next((e) => e.type === "delta");
    live.ws.close();

    // B saw everything through the copy (seq 3) live; C dropped before the copy was saved.
    const b = await connect(id, "?after=3");
    const c = await connect(id, "?after=2");
    const turnId = "turnId" in heard ? heard.turnId : "";
    const ended = (e: ServerFrame) => e.type === "turn_end" && "turnId" in e && e.turnId === turnId;
    await Promise.all([b.next(ended, 30_000), c.next(ended, 30_000)]);
    expect((await regen).status).toBe(200);
    b.ws.close();
    c.ws.close();

    // Both were still streaming the regenerate when they resumed.
    for (const s of [b, c]) expect(s.events.some((e) => e.type === "turn_start" && e.resumed)).toBe(true);
    expect(superseded(b.events)).toEqual([]);
    const t = await transcript(id);
    expect(superseded(c.events)).toEqual([
      {
        type: "exchange_superseded",
        turnId: "resume",
        fromSeq: 1,
        toSeq: 2,
        messageIds: [t[0].id, t[1].id],
        supersededBy: t[2].id,
      },
    ]);
  });
});
