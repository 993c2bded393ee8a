// A turn's stream tells what it saves, in the order it happens: a call a stop answers as
// interrupted is told by its tool_use and tool_result events like every other call, and an
// idempotent replay sends the refusals and model changes in the order the turn sent them.
import { describe, expect, inject, it } from "vitest";
import { api, connectSocket, createConversation, newTenant, send, sseEventsOf, transcript } from "./helpers";

type Sent = { type: string } & Record<string, unknown>;
const sseOf = (text: string): Sent[] => sseEventsOf(text).map((e) => ({ type: e.type, ...(e.data as object) }));

describe("stream events in order", () => {
  it("a call a stop answers as interrupted is told by its tool_use and tool_result events", async () => {
    const key = await newTenant();
    const tool = await api(
      "POST",
      "/v1/tools",
      {
        kind: "http",
        name: "slow_lookup",
        description: "A lookup that takes a while.",
        inputSchema: { type: "object" },
        endpoint: `${inject("httpToolServer")}/slow?ms=1500`,
        timeoutMs: 10_000,
      },
      { key },
    );
    expect(tool.status).toBe(201);
    const id = await createConversation(undefined, key);
    await send(id, `@tool tool_activate {"name":"slow_lookup"}`, key);
    const watch = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    const turn = api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: `@tool slow_lookup {}\n@tool memory_search {"query":"rivers"}` },
      { key, headers: { accept: "text/event-stream" } },
    );
    await watch.next((e) => e.type === "tool_use" && e.name === "slow_lookup");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {}, { key })).json).toMatchObject({ stopped: true });
    const events = sseOf((await turn).text);
    const saved = await transcript(id, key);
    const last = saved[saved.length - 1];
    const calls = saved[saved.length - 2].content.flatMap((b) => (b.type === "tool_use" ? [b] : []));
    const results = last.content.flatMap((b) => (b.type === "tool_result" ? [b] : []));
    expect(results.map((r) => r.is_error ?? false)).toEqual([false, true]);
    // Every saved call told by its tool_use, every saved result by its tool_result, in call order.
    expect(events.filter((e) => e.type === "tool_use").map((e) => [e.id, e.name])).toEqual(
      calls.map((c) => [c.id, c.name]),
    );
    const told = events.filter((e) => e.type === "tool_result");
    expect(told.map((e) => e.tool_use_id)).toEqual(results.map((r) => r.tool_use_id));
    const interrupted = told[1];
    const text = String(results[1].content);
    expect(interrupted).toMatchObject({ name: "memory_search", is_error: true, chars: text.length, preview: text });
    // Each call's tool_use comes before its tool_result.
    const at = (type: string, idOf: (e: Sent) => unknown, callId: string) =>
      events.findIndex((e) => e.type === type && idOf(e) === callId);
    for (const c of calls)
      expect(at("tool_use", (e) => e.id, c.id)).toBeLessThan(at("tool_result", (e) => e.tool_use_id, c.id));
    watch.ws!.close();
  });

  it("an idempotent replay sends refusal and model_changed in the order the turn sent them", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5" });
    const order = (events: Sent[]) =>
      events
        .filter((e) => e.type === "refusal" || e.type === "model_changed")
        .map((e) => (e.type === "refusal" ? `refusal:${e.model}` : `model_changed:${e.from}>${e.to}`));
    const keyed = (content: string, key: string) =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content },
        { headers: { accept: "text/event-stream", "idempotency-key": key } },
      );
    const ask = "tell me\n@stop refusal cyber model=claude-sonnet-5-5";
    const live = order(sseOf((await keyed(ask, "k1")).text));
    expect(live).toHaveLength(2);
    const replay = await keyed(ask, "k1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(order(sseOf(replay.text))).toEqual(live);
  });

  it("a replay carries both refusals when the fallback model refuses too, in order", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5" });
    const keyed = () =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content: "tell me\n@stop refusal cyber" },
        { headers: { accept: "text/event-stream", "idempotency-key": "k2" } },
      );
    const notices = (events: Sent[]) =>
      events.filter((e) => e.type === "refusal" || e.type === "model_changed").map(({ turnId: _t, ...e }) => e);
    const live = notices(sseOf((await keyed()).text));
    expect(live.filter((e) => e.type === "refusal")).toHaveLength(2);
    const replay = await keyed();
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(notices(sseOf(replay.text))).toEqual(live);
    // The JSON answer of a retry keeps the last refusal, as the first answer's did.
    const json = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "tell me\n@stop refusal cyber" },
      { headers: { "idempotency-key": "k2" } },
    );
    expect(json.json.refusal).toEqual(live.filter((e) => e.type === "refusal").map(({ type: _t, ...r }) => r)[1]);
  });
});
