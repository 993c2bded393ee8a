// POST /v1/conversations/:id/import while a websocket is open: each imported message reaches the
// socket as a `message` frame (turnId "import"), in seq order, as every other append does.
import { describe, expect, it } from "vitest";
import { connectSocket, createConversation, DEV_KEY, api } from "./helpers";

describe("an import with a socket open", () => {
  it("broadcasts each stored message to the conversation's sockets", async () => {
    const id = await createConversation();
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    const r = await api("POST", `/v1/conversations/${id}/import`, {
      messages: [
        { role: "user", text: "from elsewhere" },
        { role: "assistant", text: "an old reply" },
      ],
    });
    expect(r.status, r.text).toBe(201);
    await s.next((e) => e.type === "message" && e.message.seq === 2);
    const frames = s.events.filter((e) => e.type === "message");
    expect(frames.map((f) => (f.type === "message" ? [f.turnId, f.message.seq, f.message.id] : []))).toEqual([
      ["import", 1, r.json.messages[0].id],
      ["import", 2, r.json.messages[1].id],
    ]);
    s.ws!.close();
  });
});
