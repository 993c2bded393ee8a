// The real local stack (wrangler dev: chat + summarizer workers, local DO/D1/R2/Queues, the
// offline model) driven from Node over HTTP and WebSocket.
import { describe, expect, it } from "vitest";
import type { ServerFrame, TurnEvent } from "../../client";
import { ADMIN, base, client, newConversation, openSocket, textBlocks, transcript } from "./client";

const textOf = (m: { content: readonly { type: string; [key: string]: unknown }[] }) => textBlocks(m.content).join("");

describe("the local stack", () => {
  it("serves health, the dev tenant and the admin API", async () => {
    expect(await (await fetch(`${base()}/health`)).json()).toEqual({ ok: true });
    expect((await client().request("GET /v1/conversations")).status).toBe(200);
    const t = await client(ADMIN).request("POST /v1/admin/tenants", { body: { name: `e2e-${Date.now()}` } });
    expect(t.status).toBe(201);
    expect((await client(t.data.apiKey).request("GET /v1/conversations")).data.data).toEqual([]);
  });

  it("runs turns as JSON and keeps the transcript in order under 20 parallel sends", async () => {
    const id = await newConversation();
    const markers = Array.from({ length: 20 }, (_, i) => `e2e-parallel-${i}-${Date.now()}`);
    const rs = await Promise.all(
      markers.map((m) =>
        client().request("POST /v1/conversations/{id}/messages", { path: { id }, body: { content: m } }),
      ),
    );
    expect(rs.every((r) => r.status === 200)).toBe(true);
    const t = await transcript(id);
    expect(t).toHaveLength(40);
    expect(t.map((m) => m.seq)).toEqual(t.map((_, i) => i + 1));
    expect(t.every((m, i) => m.role === (i % 2 ? "assistant" : "user"))).toBe(true);
    for (const m of markers) expect(t.filter((x) => x.role === "user" && textOf(x) === m)).toHaveLength(1);
  });

  it("streams SSE incrementally: deltas arrive before the turn ends", async () => {
    const id = await newConversation();
    const events: TurnEvent[] = [];
    let endedAt = -1;
    let firstDeltaAt = -1;
    for await (const e of client().turn(id, { content: "@reply-chars 4000" })) {
      if (e.type === "delta" && firstDeltaAt < 0) firstDeltaAt = performance.now();
      if (e.type === "turn_end") endedAt = performance.now();
      events.push(e);
    }
    const deltas = events.flatMap((e) => (e.type === "delta" ? [e.text] : [])).join("");
    const saved = events.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message] : []))[0];
    expect(deltas).toBe(textBlocks(saved.content).join(""));
    // Yielded as they arrived, not after the whole body.
    expect(firstDeltaAt).toBeGreaterThan(0);
    expect(firstDeltaAt).toBeLessThan(endedAt);
    expect(events[events.length - 1].type).toBe("turn_end");
  });

  it("runs a turn over the websocket with a single-use ticket and with the header", async () => {
    const id = await newConversation();
    const { data } = await client().request("POST /v1/conversations/{id}/ws-ticket", { path: { id } });
    const ticket = String(data.ticket);
    const s = await openSocket(id, { ticket });
    s.send({ type: "send", content: "hello socket" });
    const end = await s.next<Extract<TurnEvent, { type: "turn_end" }>>((e) => e.type === "turn_end");
    expect(end.usage.output_tokens).toBeGreaterThan(0);
    expect(s.frames.some((e) => e.type === "delta")).toBe(true);
    s.socket.send("not json");
    expect((await s.next<Extract<TurnEvent, { type: "error" }>>((e) => e.type === "error")).error.type).toBe(
      "invalid_request",
    );
    s.close();
    await expect(openSocket(id, { ticket })).rejects.toThrow();
    const h = await openSocket(id, { key: "dev-local-key" });
    h.send({ type: "send", content: "hello header" });
    await h.next((e) => e.type === "turn_end");
    h.close();
    expect((await transcript(id)).map(textOf).filter((x) => x.startsWith("hello"))).toEqual([
      "hello socket",
      "hello header",
    ]);
  });

  it("iterates the socket's frames and resumes from the last seq it saw, repeating nothing", async () => {
    const id = await newConversation();
    const s = await client().socket(id);
    s.send({ type: "send", content: "first over the socket" });
    const seen: string[] = [];
    for await (const f of s) {
      seen.push(f.type);
      if (f.type === "turn_end") break;
    }
    expect(seen[0]).toBe("turn_start");
    expect(s.lastSeq).toBe(2);
    // The connection drops; a turn is saved meanwhile: the resumed socket catches up from seq 2, then says so.
    const dropped = new Promise((r) => s.socket.addEventListener("close", r));
    s.socket.close();
    await dropped;
    await client().request("POST /v1/conversations/{id}/messages", {
      path: { id },
      body: { content: "sent while away" },
    });
    const before = s.frames.length;
    await s.resume();
    const resumed = await s.next<Extract<ServerFrame, { type: "resumed" }>>((f) => f.type === "resumed");
    expect(resumed).toMatchObject({ after: 2, through: 4 });
    const caughtUp = s.frames.slice(before).flatMap((f) => (f.type === "message" ? [f.message.seq] : []));
    expect(caughtUp).toEqual([3, 4]);
    expect(s.lastSeq).toBe(4);
    s.close();
  });

  it("keeps tenants apart on the running stack", async () => {
    const id = await newConversation();
    await client().request("POST /v1/conversations/{id}/messages", {
      path: { id },
      body: { content: "tenant-a-private-e2e" },
    });
    const t = await client(ADMIN).request("POST /v1/admin/tenants", { body: { name: `e2e-b-${Date.now()}` } });
    const b = client(t.data.apiKey);
    expect((await b.request("GET /v1/conversations/{id}/messages", { path: { id } })).status).toBe(404);
    expect((await b.request("GET /v1/conversations/{id}/replay", { path: { id } })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 500));
    const s = await b.request("GET /v1/search", { query: { q: "tenant-a-private-e2e" } });
    expect(s.data.data).toEqual([]);
  });
});
