// A socket that resumes (`/ws?after=<seq>`) learns the conversation's state as a client needs it:
// the running turn and what it streamed so far, the calls a paused turn waits on, replaced
// messages marked as the transcript marks them, and a send frame still being admitted counted as
// in flight. A send frame while a turn waits on client tools is refused to its sender alone.
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../client/socket";
import { api, connectSocket, createConversation, inConversation, transcript } from "./helpers";

type Socket = Awaited<ReturnType<typeof connectSocket>> & { ws: WebSocket };
const connect = async (id: string, query = ""): Promise<Socket> =>
  (await connectSocket(`/v1/conversations/${id}/ws${query}`, { authorization: "Bearer dev-local-key" })) as Socket;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deltaText = (events: ServerFrame[], turnId: string) =>
  events
    .filter((e) => e.type === "delta" && e.turnId === turnId)
    .map((e) => (e.type === "delta" ? e.text : ""))
    .join("");

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("a resuming socket", () => {
  it("gets the running turn: its start, the reply streamed so far, then the rest as it comes", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "first\n@reply-chars 80" });
    const first = await connect(id, "?after=2");
    await first.next((e) => e.type === "resumed");
    first.ws.send(
      JSON.stringify({ type: "send", content: "Tell me about lakes.\n@reply-chars 1500\n@hold-stream after=400" }),
    );
    const start = await first.next((e) => e.type === "turn_start");
    const turnId = start.type === "turn_start" ? start.turnId : "";
    // The stream holds after about 400 characters: wait until they are all here.
    let streamed = "";
    for (;;) {
      await sleep(150);
      const now = deltaText(first.events, turnId);
      if (now.length >= 300 && now === streamed) break;
      streamed = now;
    }
    first.ws.close(1001, "network drop");
    const again = await connect(id, "?after=3");
    const resumed = await again.next((e) => e.type === "resumed");
    expect(resumed).toMatchObject({ after: 3, through: 3, turnsInFlight: 1 });
    const before = again.events.slice(0, again.events.indexOf(resumed));
    // The prompt (seq 3) was saved: it is not sent again; the reply so far is, merged.
    const merged = (type: string) =>
      first.events.filter((e) => e.type === type && "turnId" in e && e.turnId === turnId).length;
    expect(before.map((e) => e.type)).toEqual(["turn_start", ...(merged("thinking") ? ["thinking"] : []), "delta"]);
    expect(merged("delta")).toBeGreaterThan(1);
    expect(before[0]).toMatchObject({ type: "turn_start", turnId, resumed: true });
    expect(deltaText(before, turnId)).toBe(streamed);
    // A plain socket (no cursor) gets none of it.
    const plain = await connect(id);
    again.ws.send(JSON.stringify({ type: "stop", turnId }));
    const end = await again.next((e) => e.type === "turn_end" && e.turnId === turnId);
    expect(end).toMatchObject({ stop_reason: "interrupted" });
    await plain.next((e) => e.type === "turn_end");
    expect(plain.events.some((e) => e.type === "turn_start")).toBe(false);
    // The saved reply is what was streamed; once the turn is over a resuming socket gets no turn.
    const t = await transcript(id);
    expect(t.at(-1)!.role).toBe("assistant");
    const late = await connect(id, `?after=${t.at(-1)!.seq}`);
    const idle = await late.next((e) => e.type === "resumed");
    expect(late.events.slice(0, late.events.indexOf(idle))).toEqual([]);
    for (const s of [again, plain, late]) s.ws.close();
  });

  it("gets replaced messages marked as the transcript marks them", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "Name a lake.\n@reply-chars 60" });
    expect((await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true })).status).toBe(200);
    const t = await transcript(id);
    expect(t[0].superseded).toBe(true);
    const s = await connect(id, "?after=0");
    await s.next((e) => e.type === "resumed");
    const sent = s.events.flatMap((e) => (e.type === "message" ? [JSON.stringify(e.message)] : []));
    expect(sent).toEqual(t.map((m) => JSON.stringify(m)));
    s.ws.close();
  });

  it("takes a cursor past the end as the end: the next turn's messages still arrive", async () => {
    const id = await createConversation();
    const s = await connect(id, "?after=50");
    expect(await s.next((e) => e.type === "resumed")).toMatchObject({ after: 50, through: 0, lastSeq: 0 });
    s.ws.send(JSON.stringify({ type: "send", content: "hello" }));
    await s.next((e) => e.type === "turn_end");
    expect(s.events.filter((e) => e.type === "message").map((e) => e.type === "message" && e.message.seq)).toEqual([
      1, 2,
    ]);
    s.ws.close();
  });

  it("is told the calls a paused turn waits on; a send frame then is refused to its sender alone", async () => {
    const id = await createConversation();
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: '@tool get_weather {"city":"Kyiv"}',
      tools: [weather],
    });
    expect(paused.json.stop_reason).toBe("requires_action");
    const a = await connect(id, "?after=0");
    const resumed = await a.next((e) => e.type === "resumed");
    const action = a.events.find((e) => e.type === "requires_action");
    expect(action).toMatchObject({ type: "requires_action", ...paused.json.requires_action });
    expect(a.events.indexOf(action!)).toBeLessThan(a.events.indexOf(resumed));
    const b = await connect(id);
    a.ws.send(JSON.stringify({ type: "send", content: "meanwhile" }));
    const refused = await a.next((e) => e.type === "error");
    expect(refused).toMatchObject({ error: { type: "turn_paused", status: 409 } });
    b.ws.send(JSON.stringify({ type: "ping" }));
    await b.next((e) => e.type === "pong");
    // Nothing of it reached the other socket, and nothing ran.
    expect(b.events.map((e) => e.type)).toEqual(["pong"]);
    expect((await transcript(id)).filter((m) => m.role === "user")).toHaveLength(1);
    for (const s of [a, b]) s.ws.close();
  });

  it("counts a send frame still being admitted as in flight, so the client does not send it again", async () => {
    const id = await createConversation();
    // The admission's awaits (key, rate limiter, D1) made slow.
    await inConversation(id, (instance) => {
      const sockets = (instance as unknown as { sockets: { admitFrame: (...args: unknown[]) => Promise<boolean> } })
        .sockets;
      const admit = sockets.admitFrame.bind(sockets);
      sockets.admitFrame = async (...args) => (await sleep(400), admit(...args));
    });
    const first = await connect(id);
    first.ws.send(JSON.stringify({ type: "send", content: "sent just before the drop" }));
    await sleep(50);
    first.ws.close(1001, "network drop");
    const again = await connect(id, "?after=0");
    expect(await again.next((e) => e.type === "resumed")).toMatchObject({ lastSeq: 0, turnsInFlight: 1 });
    await again.next((e) => e.type === "turn_end");
    expect((await transcript(id)).filter((m) => m.role === "user")).toHaveLength(1);
    again.ws.close();
  });

  it("counts a large send frame (admitted before it is read) as in flight while it waits for admission", async () => {
    const id = await createConversation();
    // Over ADMIT_BEFORE_READING: the key and request checks run on the unread frame, made slow here.
    await inConversation(id, (instance) => {
      const sockets = (instance as unknown as { sockets: { admitFrame: (...args: unknown[]) => Promise<boolean> } })
        .sockets;
      const admit = sockets.admitFrame.bind(sockets);
      sockets.admitFrame = async (...args) => (await sleep(400), admit(...args));
    });
    const first = await connect(id);
    first.ws.send(JSON.stringify({ type: "send", content: `${"x".repeat(70_000)}\nsent just before the drop` }));
    await sleep(50);
    first.ws.close(1001, "network drop");
    const again = await connect(id, "?after=0");
    expect(await again.next((e) => e.type === "resumed")).toMatchObject({ lastSeq: 0, turnsInFlight: 1 });
    await again.next((e) => e.type === "turn_end");
    expect((await transcript(id)).filter((m) => m.role === "user")).toHaveLength(1);
    again.ws.close();
  });
});
