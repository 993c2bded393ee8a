// The websocket route's query string follows every other route's: a repeated `after` is a 400
// naming it (never its first value), an unknown parameter is a 400, and the two it takes
// (`after`, `ticket`) still open the socket.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, DEV_KEY } from "./helpers";

const auth = { authorization: `Bearer ${DEV_KEY}` };

describe("GET /v1/conversations/:id/ws query", () => {
  it("refuses a repeated after with a 400 naming it, and opens nothing", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "one" });
    for (const q of ["?after=3&after=0", "?after=0&after=0"]) {
      const s = await connectSocket(`/v1/conversations/${id}/ws${q}`, auth);
      expect(s.ws).toBeNull();
      expect(s.status).toBe(400);
      expect(JSON.parse(s.text).error.message).toMatch(/^after: .*received array/);
    }
  });

  it("refuses an unknown parameter as the other routes do", async () => {
    const id = await createConversation();
    const s = await connectSocket(`/v1/conversations/${id}/ws?after=0&zzz=1`, auth);
    expect(s.ws).toBeNull();
    expect(s.status).toBe(400);
    expect(JSON.parse(s.text).error.message).toBe("unknown field zzz");
    expect((await connectSocket(`/v1/conversations/${id}/ws?zzz`, auth)).status).toBe(400);
  });

  it("still opens with after alone, and with a ticket beside after", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "one" });
    const s = await connectSocket(`/v1/conversations/${id}/ws?after=1`, auth);
    expect(s.status).toBe(101);
    expect(await s.next((e) => e.type === "resumed")).toMatchObject({ after: 1, lastSeq: 2 });
    s.ws?.close();
    const ticket = (await api("POST", `/v1/conversations/${id}/ws-ticket`)).json.ticket;
    const t = await connectSocket(`/v1/conversations/${id}/ws?ticket=${ticket}&after=0`);
    expect(t.status).toBe(101);
    expect(await t.next((e) => e.type === "resumed")).toMatchObject({ after: 0, lastSeq: 2 });
    t.ws?.close();
    // The bad cursor keeps its own message.
    const bad = await connectSocket(`/v1/conversations/${id}/ws?after=-1`, auth);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.message).toMatch(/^after: /);
  });
});
