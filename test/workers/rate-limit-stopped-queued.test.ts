// A turn stopped while it is still queued never runs: nothing of it is saved and no model is called,
// so it gives its turn tokens (the key's and the tenant's) back, whether it was sent as a JSON
// `POST .../messages` or as a websocket `send` frame (docs/api-notes.md "Rate limits"). The running
// turn ahead of it, stopped mid-reply, keeps its token.
import { describe, expect, it } from "vitest";
import { ofType } from "../blocks";
import { callWith } from "./app-with-vars";
import { api, connectSocket, createConversation, inConversation, newTenant } from "./helpers";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "2",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "2",
};
const HELD = "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200";

const turn = (key: string, id: string, content: string) =>
  callWith(LIMITS, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: { content } });
const socketOf = (id: string, key: string) =>
  connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });

/** Waits until the held reply has streamed its first part (so it made its model call); its turnId. */
async function streaming(c: Awaited<ReturnType<typeof socketOf>>) {
  const start = await c.next((e) => e.type === "turn_start");
  await c.next((e) => e.type === "delta" && e.turnId === start.turnId);
  return start.turnId as string;
}

describe("a queued turn stopped before it ran", () => {
  it("gives its turn tokens back when it was a JSON turn", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const watch = await socketOf(id, key);
    const first = turn(key, id, HELD);
    await streaming(watch);
    const second = turn(key, id, "A second question.");
    const queued = await watch.next((e) => e.type === "turn_queued");
    const stop = await api("POST", `/v1/conversations/${id}/stop`, { turnId: queued.turnId }, { key });
    expect(stop.json).toEqual({ turnId: queued.turnId, stopped: true });
    const cancelled = await second;
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ turnId: queued.turnId, stop_reason: "interrupted", messages: [] });
    // The running turn, stopped after its model call, keeps its token.
    await api("POST", `/v1/conversations/${id}/stop`, {}, { key });
    expect((await first).json.stop_reason).toBe("interrupted");
    // Two turns a minute: the held one and this one (the cancelled one's came back, the key's and the tenant's).
    const third = await turn(key, id, "A third question.");
    expect(third.status, JSON.stringify(third.json)).toBe(200);
    expect(third.json.stop_reason).toBe("end_turn");
    // The limit itself still holds.
    expect((await turn(key, id, "A fourth question.")).status).toBe(429);
    watch.ws!.close();
  });

  it("gives its turn tokens back when it was a websocket send frame", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    await inConversation(id, async (instance) => {
      instance.env = { ...instance.env, ...LIMITS };
    });
    const c = await socketOf(id, key);
    c.ws!.send(JSON.stringify({ type: "send", content: HELD }));
    const running = await streaming(c);
    c.ws!.send(JSON.stringify({ type: "send", content: "A second question." }));
    const queued = await c.next((e) => e.type === "turn_queued");
    c.ws!.send(JSON.stringify({ type: "stop", turnId: queued.turnId }));
    const cancelledEnd = await c.next((e) => e.type === "turn_end" && e.turnId === queued.turnId);
    expect(ofType(cancelledEnd, "turn_end").stop_reason).toBe("interrupted");
    c.ws!.send(JSON.stringify({ type: "stop" }));
    await c.next((e) => e.type === "turn_end" && e.turnId === running);
    c.ws!.send(JSON.stringify({ type: "send", content: "A third question.", ref: "third" }));
    const accepted = await c.next((e) => (e.type === "accepted" && e.ref === "third") || e.type === "error");
    expect(accepted.type, JSON.stringify(accepted)).toBe("accepted");
    const third = accepted.type === "accepted" ? accepted.turnId : "";
    const end = await c.next((e) => e.type === "turn_end" && e.turnId === third);
    expect(ofType(end, "turn_end").stop_reason).toBe("end_turn");
    // The limit itself still holds: a fourth turn of the minute is refused.
    c.ws!.send(JSON.stringify({ type: "send", content: "A fourth question." }));
    const refused = ofType(await c.next((e) => e.type === "error"), "error");
    expect(refused.error.type).toBe("rate_limited");
    c.ws!.close();
  });
});
