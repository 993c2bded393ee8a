// A socket whose key was revoked hears nothing more of the conversation, the events of turns that
// never run included: a `turn_queued`, and the `turn_start` / `turn_end` of a queued turn stopped
// before it ran. The conversation looks the socket's key up before such a frame reaches it
// (durable-objects/conversation/sockets.ts `broadcast`) and closes it with 1008 when it is gone.
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../client/socket";
import { ADMIN, api, connectSocket, createConversation } from "./helpers";

/** A tenant, a second key of it, a conversation, and a socket of each key (the second key's close code when it closes). */
async function twoSockets() {
  const made = await api("POST", "/v1/admin/tenants", { name: `rq-${crypto.randomUUID()}` }, { key: ADMIN });
  expect(made.status).toBe(201);
  const key = made.json.apiKey;
  const other = await api("POST", "/v1/keys", {}, { key });
  expect(other.status).toBe(201);
  const conv = await createConversation(undefined, key);
  const revoked = await connectSocket(`/v1/conversations/${conv}/ws`, { authorization: `Bearer ${other.json.apiKey}` });
  const bystander = await connectSocket(`/v1/conversations/${conv}/ws`, { authorization: `Bearer ${key}` });
  const closed = new Promise<number>((resolve) => revoked.ws!.addEventListener("close", (e) => resolve(e.code)));
  const revoke = async () =>
    expect((await api("DELETE", `/v1/keys/${other.json.key.id}`, undefined, { key })).status).toBe(200);
  return { key, conv, revoked, bystander, closed, revoke };
}

const of = (events: ServerFrame[], turnId: string) => events.filter((e) => "turnId" in e && e.turnId === turnId);

/** A turn that streams a little and then holds until it is stopped: the next turn waits behind it. */
const HELD = "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200";

describe("a socket whose key is revoked", () => {
  it("is closed (1008) before a turn_queued reaches it", async () => {
    const { key, conv, revoked, bystander, closed, revoke } = await twoSockets();
    const running = api("POST", `/v1/conversations/${conv}/messages`, { content: HELD }, { key });
    const start = await revoked.next((e) => e.type === "turn_start");
    await revoked.next((e) => e.type === "delta");
    await revoke();
    const waiting = api("POST", `/v1/conversations/${conv}/messages`, { content: "after" }, { key });
    const queued = await bystander.next((e) => e.type === "turn_queued");
    const queuedId = "turnId" in queued ? queued.turnId : "";
    // Whichever comes first: the close, or the queued turn's frame.
    const first = await Promise.race([
      closed.then((code) => ({ code })),
      revoked.next((e) => e.type === "turn_queued").then((frame) => ({ frame })),
    ]);
    expect(first).toEqual({ code: 1008 });
    expect(of(revoked.events, queuedId)).toEqual([]);
    expect(revoked.events.at(-1)).toMatchObject({
      type: "error",
      turnId: null,
      error: { type: "authentication_error", status: 401 },
    });
    const runningId = "turnId" in start ? start.turnId : "";
    await api("POST", `/v1/conversations/${conv}/stop`, { turnId: runningId }, { key });
    expect((await running).json.stop_reason).toBe("interrupted");
    expect((await waiting).status).toBe(200);
    bystander.ws!.close();
  });

  it("is closed (1008) before the start and end of a queued turn stopped before it ran", async () => {
    const { key, conv, revoked, bystander, closed, revoke } = await twoSockets();
    const running = api("POST", `/v1/conversations/${conv}/messages`, { content: HELD }, { key });
    const start = await revoked.next((e) => e.type === "turn_start");
    await revoked.next((e) => e.type === "delta");
    const waiting = api("POST", `/v1/conversations/${conv}/messages`, { content: "never runs" }, { key });
    // Heard while the key is active.
    const queued = await revoked.next((e) => e.type === "turn_queued");
    const queuedId = "turnId" in queued ? queued.turnId : "";
    await revoke();
    expect((await api("POST", `/v1/conversations/${conv}/stop`, { turnId: queuedId }, { key })).status).toBe(200);
    await bystander.next((e) => e.type === "turn_end" && e.turnId === queuedId);
    const first = await Promise.race([
      closed.then((code) => ({ code })),
      revoked.next((e) => e.type === "turn_start" && e.turnId === queuedId).then((frame) => ({ frame })),
    ]);
    expect(first).toEqual({ code: 1008 });
    expect(of(revoked.events, queuedId).map((e) => e.type)).toEqual(["turn_queued"]);
    const runningId = "turnId" in start ? start.turnId : "";
    await api("POST", `/v1/conversations/${conv}/stop`, { turnId: runningId }, { key });
    expect((await running).json.stop_reason).toBe("interrupted");
    expect((await waiting).json.stop_reason).toBe("interrupted");
    bystander.ws!.close();
  });
});
