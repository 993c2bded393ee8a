// The conversation's websocket: both auth paths, the event vocabulary, and bad frames.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, newTenant, transcript, worker } from "./helpers";
import { ofType } from "../blocks";

/** The conversation's socket, authenticated by key (header) or by ticket. */
const connect = (id: string, auth: { key?: string; ticket?: string }) =>
  connectSocket(
    `/v1/conversations/${id}/ws${auth.ticket ? `?ticket=${auth.ticket}` : ""}`,
    auth.key ? { authorization: `Bearer ${auth.key}` } : {},
  );

describe("websocket", () => {
  it("runs a turn over the socket with the header auth path", async () => {
    const id = await createConversation();
    const c = await connect(id, { key: "dev-local-key" });
    expect(c.status).toBe(101);
    c.ws!.send(JSON.stringify({ type: "send", content: "@reply-chars 500" }));
    const end = await c.next((e) => e.type === "turn_end");
    expect(end.stop_reason).toBe("end_turn");
    const types = c.events.map((e) => e.type);
    expect(types[0]).toBe("turn_start");
    expect(types.filter((t) => t === "delta").length).toBeGreaterThan(3);
    expect(types.filter((t) => t === "message")).toHaveLength(2);
    expect((await transcript(id)).length).toBe(2);
    c.ws!.close();
  });

  it("accepts a ticket once, and refuses reuse, another conversation and expiry", async () => {
    const id = await createConversation();
    const other = await createConversation();
    const t = await api("POST", `/v1/conversations/${id}/ws-ticket`);
    expect(t.status).toBe(201);
    expect(t.json.ticket).toMatch(/^wst_/);
    const first = await connect(id, { ticket: t.json.ticket });
    expect(first.status).toBe(101);
    first.ws!.send(JSON.stringify({ type: "send", content: "over the socket" }));
    await first.next((e) => e.type === "turn_end");
    first.ws!.close();
    expect((await connect(id, { ticket: t.json.ticket })).status).toBe(401);
    // A plain GET (no upgrade) is a 426 and leaves the ticket unspent.
    const kept = (await api("POST", `/v1/conversations/${id}/ws-ticket`)).json.ticket;
    const plain = await worker().fetch(new Request(`http://chat.test/v1/conversations/${id}/ws?ticket=${kept}`));
    expect(plain.status).toBe(426);
    expect(await plain.json()).toMatchObject({ error: { type: "upgrade_required" } });
    const later = await connect(id, { ticket: kept });
    expect(later.status).toBe(101);
    later.ws!.close();
    const t2 = await api("POST", `/v1/conversations/${id}/ws-ticket`);
    expect((await connect(other, { ticket: t2.json.ticket })).status).toBe(404);
    const { issueTicket, consumeTicket } = await import("../../workers/chat/ws-tickets");
    const { env } = await import("cloudflare:workers");
    const old = await issueTicket(env.DB, { tenantId: "dev", conversationId: id, now: Date.now() - 120_000 });
    expect(await consumeTicket(env.DB, old.ticket)).toBeNull();
    expect((await connect(id, {})).status).toBe(401);
  });

  it("answers bad frames with an error event and keeps the socket usable", async () => {
    const id = await createConversation();
    const c = await connect(id, { key: "dev-local-key" });
    c.ws!.send("{not json");
    const e1 = await c.next((e) => e.type === "error");
    expect(e1.error.message).toMatch(/JSON/);
    c.ws!.send(JSON.stringify({ type: "send" }));
    await c.next((e) => e.type === "error" && /content/.test(e.error.message));
    c.ws!.send(JSON.stringify({ type: "launch" }));
    await c.next((e) => e.type === "error" && e !== e1 && /type/.test(e.error.message));
    // Over the limit in UTF-8 bytes, though not in characters: 1.5 M euro signs are 4.5 MB.
    c.ws!.send(JSON.stringify({ type: "send", content: "€".repeat(1_500_000) }));
    await c.next((e) => e.type === "error" && /frame larger than 4194304 bytes/.test(e.error.message));
    c.ws!.send(JSON.stringify({ type: "ping" }));
    await c.next((e) => e.type === "pong");
    c.ws!.send(JSON.stringify({ type: "send", content: "still here" }));
    await c.next((e) => e.type === "turn_end");
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant"]);
    c.ws!.close();
  });

  it("refuses another tenant's key on the socket", async () => {
    const id = await createConversation();
    const keyB = await newTenant();
    expect((await connect(id, { key: keyB })).status).toBe(404);
  });

  it("broadcasts a turn sent over HTTP to the conversation's sockets", async () => {
    const id = await createConversation();
    const c = await connect(id, { key: "dev-local-key" });
    const r = await api("POST", `/v1/conversations/${id}/messages`, { content: "from http" });
    expect(r.status).toBe(200);
    const msg = ofType(await c.next((e) => e.type === "message" && e.message.role === "user"), "message");
    expect(msg.message.content[0]).toMatchObject({ type: "text", text: "from http" });
    c.ws!.close();
  });

  it("a send frame that names itself (ref) is told its turnId, to its socket alone and before the turn's events; a refusal names it too", async () => {
    const id = await createConversation();
    const mine = await connect(id, { key: "dev-local-key" });
    const other = await connect(id, { key: "dev-local-key" });
    mine.ws!.send(JSON.stringify({ type: "send", content: "named send", ref: "r-1" }));
    const end = await mine.next((e) => e.type === "turn_end");
    const at = mine.events.findIndex((e) => e.type === "accepted");
    const turnId = ofType(end, "turn_end").turnId;
    expect(mine.events[at]).toEqual({ type: "accepted", ref: "r-1", turnId });
    // Before any event of its turn.
    expect(mine.events.findIndex((e) => "turnId" in e && e.turnId === turnId)).toBe(at);
    await other.next((e) => e.type === "turn_end");
    expect(other.events.some((e) => e.type === "accepted")).toBe(false);
    // Without a ref nothing new is sent; a refused send carries its ref (and the turnId it would have had).
    mine.ws!.send(JSON.stringify({ type: "send", attachments: ["att_nope"], content: "x", ref: "r-2" }));
    const refused = await mine.next((e) => e.type === "error" && "ref" in e);
    expect(refused).toMatchObject({ type: "error", ref: "r-2", turnId: expect.stringMatching(/^turn_/) });
    mine.ws!.send(JSON.stringify({ type: "send", content: "x", ref: "" }));
    expect(await mine.next((e) => e.type === "error" && !("ref" in e) && e.turnId === null)).toMatchObject({
      error: { type: "invalid_request" },
    });
    mine.ws!.close();
    other.ws!.close();
  });

  it("a named send repeated with its idempotency key is told the turn it already is, before the replayed events", async () => {
    const id = await createConversation();
    const c = await connect(id, { key: "dev-local-key" });
    const idempotencyKey = `k-${crypto.randomUUID()}`;
    c.ws!.send(JSON.stringify({ type: "send", content: "hello there", idempotencyKey, ref: "first" }));
    const end = ofType(await c.next((e) => e.type === "turn_end"), "turn_end");
    const before = c.events.length;
    c.ws!.send(JSON.stringify({ type: "send", content: "hello there", idempotencyKey, ref: "again" }));
    await c.next((e) => e.type === "turn_end" && c.events.indexOf(e) >= before);
    expect(c.events[before]).toEqual({ type: "accepted", ref: "again", turnId: end.turnId });
    c.ws!.close();
  });
});
