// The real local stack (wrangler dev: chat + summarizer workers, local DO/D1/R2/Queues, the
// offline model) driven from Node over HTTP and WebSocket.
import { describe, expect, it } from "vitest";
import { ADMIN, api, base, newConversation, openSocket, transcript } from "./client";

const textOf = (m: any) => m.content.map((b: any) => (b.type === "text" ? b.text : "")).join("");

describe("the local stack", () => {
  it("serves health, the dev tenant and the admin API", async () => {
    expect(await (await fetch(`${base()}/health`)).json()).toEqual({ ok: true });
    expect((await api("GET", "/v1/conversations")).status).toBe(200);
    const t = await api("POST", "/v1/admin/tenants", { name: `e2e-${Date.now()}` }, { key: ADMIN });
    expect(t.status).toBe(201);
    expect((await api("GET", "/v1/conversations", undefined, { key: t.json.apiKey })).json.conversations).toEqual([]);
  });

  it("runs turns as JSON and keeps the transcript in order under 20 parallel sends", async () => {
    const id = await newConversation();
    const markers = Array.from({ length: 20 }, (_, i) => `e2e-parallel-${i}-${Date.now()}`);
    const rs = await Promise.all(markers.map((m) => api("POST", `/v1/conversations/${id}/messages`, { content: m })));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    const t = await transcript(id);
    expect(t).toHaveLength(40);
    expect(t.map((m) => m.seq)).toEqual(t.map((_, i) => i + 1));
    expect(t.every((m, i) => m.role === (i % 2 ? "assistant" : "user"))).toBe(true);
    for (const m of markers) expect(t.filter((x) => x.role === "user" && textOf(x) === m)).toHaveLength(1);
  });

  it("streams SSE incrementally: deltas arrive before the turn ends", async () => {
    const id = await newConversation();
    const res = await fetch(`${base()}/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { authorization: "Bearer dev-local-key", "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: "@reply-chars 4000" }),
    });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let chunks = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks++;
      text += decoder.decode(value, { stream: true });
    }
    const events = [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => ({ type: m[1], data: JSON.parse(m[2]) }));
    const deltas = events.filter((e) => e.type === "delta").map((e) => e.data.text).join("");
    const saved = events.find((e) => e.type === "message" && e.data.message.role === "assistant")!.data.message;
    expect(deltas).toBe(saved.content[0].text);
    expect(chunks).toBeGreaterThan(1);
    expect(events[events.length - 1].type).toBe("turn_end");
  });

  it("runs a turn over the websocket with a single-use ticket and with the header", async () => {
    const id = await newConversation();
    const { json } = await api("POST", `/v1/conversations/${id}/ws-ticket`);
    const s = await openSocket(id, { ticket: json.ticket });
    s.ws.send(JSON.stringify({ type: "send", content: "hello socket" }));
    const end = await s.next((e) => e.type === "turn_end");
    expect(end.usage.output_tokens).toBeGreaterThan(0);
    expect(s.events.some((e) => e.type === "delta")).toBe(true);
    s.ws.send("not json");
    expect((await s.next((e) => e.type === "error")).error.type).toBe("invalid_request");
    s.close();
    await expect(openSocket(id, { ticket: json.ticket })).rejects.toThrow();
    const h = await openSocket(id, { key: "dev-local-key" });
    h.ws.send(JSON.stringify({ type: "send", content: "hello header" }));
    await h.next((e) => e.type === "turn_end");
    h.close();
    expect((await transcript(id)).map(textOf).filter((x) => x.startsWith("hello"))).toEqual(["hello socket", "hello header"]);
  });

  it("keeps tenants apart on the running stack", async () => {
    const id = await newConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "tenant-a-private-e2e" });
    const t = await api("POST", "/v1/admin/tenants", { name: `e2e-b-${Date.now()}` }, { key: ADMIN });
    const keyB = t.json.apiKey;
    expect((await api("GET", `/v1/conversations/${id}/messages`, undefined, { key: keyB })).status).toBe(404);
    expect((await api("GET", `/v1/conversations/${id}/replay`, undefined, { key: keyB })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 500));
    const s = await api("GET", `/v1/search?q=tenant-a-private-e2e`, undefined, { key: keyB });
    expect(s.json.results).toEqual([]);
  });
});
