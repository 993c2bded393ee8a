// A repeated Idempotency-Key while the key's turn is starting up (queued, its turn_start not sent yet)
// is told that turn: the websocket error frame's `turnId` and the 409's message name it, so a stop can.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, inConversation } from "./helpers";

const newKey = () => `turn-${crypto.randomUUID()}`;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The turn-start look-up of revoked keys (closeRevoked: a D1 read on an auth-cache miss) made slow. */
async function slowKeyLookups(id: string, ms: number): Promise<void> {
  await inConversation(id, (instance) => {
    const sockets = (instance as unknown as { sockets: { closeRevoked(): Promise<void> } }).sockets;
    const real = sockets.closeRevoked.bind(sockets);
    sockets.closeRevoked = async () => {
      await pause(ms);
      return real();
    };
  });
}

async function openSocket(id: string) {
  const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
  if (!c.ws) throw new Error(`no websocket: ${c.status} ${c.text}`);
  return { ...c, ws: c.ws };
}

describe("a repeated Idempotency-Key while its turn starts up", () => {
  it("websocket: the in-progress error frame names the key's own turn, not one made for the frame", async () => {
    const id = await createConversation();
    const key = newKey();
    const c = await openSocket(id);
    await slowKeyLookups(id, 800);
    const frame = JSON.stringify({ type: "send", content: "@reply-chars 200", idempotencyKey: key });
    c.ws.send(frame);
    c.ws.send(frame);
    const busy = await c.next((e) => e.type === "error");
    const start = await c.next((e) => e.type === "turn_start");
    await c.next((e) => e.type === "turn_end");
    c.ws.close();
    expect(busy).toMatchObject({ idempotencyKey: key, error: { type: "idempotency_in_progress" } });
    expect("turnId" in busy && busy.turnId).toBe(start.type === "turn_start" && start.turnId);
  });

  it("websocket: stopping the turn the error frame names stops the key's turn", async () => {
    const id = await createConversation();
    const key = newKey();
    const c = await openSocket(id);
    await slowKeyLookups(id, 800);
    const content = "hold\n@reply-chars 1500\n@hold-stream after=200";
    const frame = JSON.stringify({ type: "send", content, idempotencyKey: key });
    c.ws.send(frame);
    c.ws.send(frame);
    const busy = await c.next((e) => e.type === "error");
    const named = "turnId" in busy ? busy.turnId : null;
    expect(typeof named).toBe("string");
    const stop = await api("POST", `/v1/conversations/${id}/stop`, { turnId: named });
    const start = await c.next((e) => e.type === "turn_start");
    // A stop that missed leaves the key's turn held: stopped here so the test ends either way.
    if (!stop.json.stopped) await api("POST", `/v1/conversations/${id}/stop`, {});
    const end = await c.next((e) => e.type === "turn_end");
    c.ws.close();
    expect(stop.json).toEqual({ turnId: start.type === "turn_start" && start.turnId, stopped: true });
    expect(end).toMatchObject({ stop_reason: "interrupted" });
  });

  it("websocket: a same-key send before the key's turn is queued names no turn (turnId null), not one made for it", async () => {
    const id = await createConversation();
    const key = newKey();
    const c = await openSocket(id);
    // The first request's check for a paused turn, between its key's claim and its queueing, made slow.
    await inConversation(id, (instance) => {
      const paused = instance.paused as unknown as { get(): Promise<unknown> };
      const real = paused.get.bind(paused);
      let calls = 0;
      paused.get = async () => {
        if (calls++ === 0) await pause(800);
        return real();
      };
    });
    const first = api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "@reply-chars 200" },
      { headers: { "idempotency-key": key } },
    );
    await pause(200);
    c.ws.send(JSON.stringify({ type: "send", content: "@reply-chars 200", idempotencyKey: key }));
    const busy = await c.next((e) => e.type === "error");
    const ran = await first;
    c.ws.close();
    expect(ran.status).toBe(200);
    expect(busy).toMatchObject({ turnId: null, idempotencyKey: key, error: { type: "idempotency_in_progress" } });
  });

  it("HTTP: a same-key POST while the key's turn starts up gets a 409 whose message names the turn", async () => {
    const id = await createConversation();
    const key = newKey();
    const c = await openSocket(id);
    await slowKeyLookups(id, 800);
    const post = () =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content: "@reply-chars 200" },
        { headers: { "idempotency-key": key } },
      );
    const first = post();
    await pause(200);
    const busy = await post();
    const ran = await first;
    c.ws.close();
    expect(busy.status).toBe(409);
    expect(busy.json.error?.type).toBe("idempotency_in_progress");
    expect(busy.json.error?.message).toContain(ran.json.turnId);
  });

  it("HTTP: a same-key POST of tool results while the continuation starts up gets a 409 naming the paused turn", async () => {
    const id = await createConversation();
    const tools = [
      {
        name: "get_weather",
        description: "The weather in a city",
        input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    ];
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool get_weather {"city":"Oslo"}`,
      tools,
    });
    const action = paused.json.requires_action;
    if (!action) throw new Error(`no requires_action: ${paused.text}`);
    const key = newKey();
    const c = await openSocket(id);
    await slowKeyLookups(id, 800);
    const post = () =>
      api(
        "POST",
        `/v1/conversations/${id}/tool-results`,
        { results: [{ tool_use_id: action.calls[0].id, content: "cold" }] },
        { headers: { "idempotency-key": key } },
      );
    const first = post();
    await pause(200);
    const busy = await post();
    const ran = await first;
    c.ws.close();
    expect(ran.status).toBe(200);
    expect(busy.status).toBe(409);
    expect(busy.json.error?.type).toBe("idempotency_in_progress");
    expect(busy.json.error?.message).toContain(paused.json.turnId);
  });
});
