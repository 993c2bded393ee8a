// A turn still queued when its socket drops: a resume names it (its `turn_queued`, marked
// `resumed`), a stop frame naming it cancels it, and a send again with the same key is told its id.
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../client/socket";
import { api, connectSocket, createConversation, transcript } from "./helpers";

type Socket = Awaited<ReturnType<typeof connectSocket>> & { ws: WebSocket };
const connect = async (id: string, query = ""): Promise<Socket> =>
  (await connectSocket(`/v1/conversations/${id}/ws${query}`, { authorization: "Bearer dev-local-key" })) as Socket;
const tid = (e: ServerFrame) => ("turnId" in e ? (e as { turnId: string | null }).turnId : undefined);

/** A conversation with a turn held running and a keyed one queued behind it, from a socket that then drops. */
async function queuedThenDropped(key: string) {
  const id = await createConversation();
  const a = await connect(id);
  a.ws.send(JSON.stringify({ type: "send", content: "hold me\n@hold-stream after=50" }));
  const running = tid(await a.next((e) => e.type === "turn_start")) as string;
  a.ws.send(JSON.stringify({ type: "send", content: "queued one", idempotencyKey: key, ref: "q1" }));
  const queuedId = tid(await a.next((e) => e.type === "turn_queued")) as string;
  a.ws.close(1001, "network drop");
  const lastSeq = (await transcript(id)).at(-1)?.seq ?? 0;
  const b = await connect(id, `?after=${lastSeq}`);
  return { id, b, running, queuedId };
}

describe("a queued turn across a socket drop", () => {
  it("a resume names the queued turn after the running one; a stop frame naming it cancels it", async () => {
    const { id, b, running, queuedId } = await queuedThenDropped("k-resume-queued");
    const resumed = await b.next((e) => e.type === "resumed");
    const before = b.events.slice(0, b.events.indexOf(resumed));
    const start = before.findIndex((e) => e.type === "turn_start" && tid(e) === running);
    const queued = before.findIndex((e) => e.type === "turn_queued" && tid(e) === queuedId);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(queued).toBeGreaterThan(start);
    expect(before[queued]).toMatchObject({ type: "turn_queued", turnId: queuedId, ahead: 1, resumed: true });
    // The id it learned is the one a stop names: the queued turn ends interrupted before it runs.
    b.ws.send(JSON.stringify({ type: "stop", turnId: queuedId }));
    expect(await b.next((e) => e.type === "stopped")).toMatchObject({ turnId: queuedId, stopped: true });
    expect(await b.next((e) => e.type === "turn_end" && tid(e) === queuedId)).toMatchObject({
      stop_reason: "interrupted",
    });
    await api("POST", `/v1/conversations/${id}/stop`, { turnId: running });
    await b.next((e) => e.type === "turn_end" && tid(e) === running);
    b.ws.close();
    // It never ran: its user message was never saved.
    expect((await transcript(id)).some((m) => JSON.stringify(m.content).includes("queued one"))).toBe(false);
  });

  it("a send again with the same key while the turn is queued is told the original turn's id", async () => {
    const { id, b, running, queuedId } = await queuedThenDropped("k-resend-queued");
    await b.next((e) => e.type === "resumed");
    b.ws.send(JSON.stringify({ type: "send", content: "queued one", idempotencyKey: "k-resend-queued", ref: "q2" }));
    const answer = await b.next((e) => e.type === "error" || e.type === "accepted");
    expect(answer).toMatchObject({
      type: "error",
      turnId: queuedId,
      ref: "q2",
      error: { type: "idempotency_in_progress" },
    });
    expect(answer.type === "error" && answer.error.message).toContain(queuedId);
    // Over HTTP the 409 names it too (in its message).
    const http = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "queued one" },
      { headers: { "idempotency-key": "k-resend-queued" } },
    );
    expect(http.status).toBe(409);
    expect(http.text).toContain(queuedId);
    await api("POST", `/v1/conversations/${id}/stop`, { turnId: queuedId });
    await api("POST", `/v1/conversations/${id}/stop`, { turnId: running });
    await b.next((e) => e.type === "turn_end" && tid(e) === running);
    b.ws.close();
  });
});
