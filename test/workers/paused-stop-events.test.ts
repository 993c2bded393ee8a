// A turn waiting on client tools that a stop ends, or whose wait runs out: its calls are closed with
// the interrupted result, and each is told by a tool_result event as every result the platform
// gives (docs/api-notes.md, Stopping a turn), before the saved message and the turn's end.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const content = '@tool get_weather {"city":"Rome"}\n@tool get_weather {"city":"Oslo"}';

async function pausedWithSocket(settings?: Record<string, unknown>) {
  const id = await createConversation(settings);
  const paused = await api("POST", `/v1/conversations/${id}/messages`, { content, tools: [weather] });
  const calls = paused.json.requires_action?.calls ?? [];
  expect(calls).toHaveLength(2);
  const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
  return { id, turnId: paused.json.turnId as string, ids: calls.map((c) => c.id), sock };
}

type Told = { type: string; tool_use_id?: string; is_error?: boolean };

describe("a paused turn's calls closed without results", () => {
  it("are each told by a tool_result event when a stop ends the wait", async () => {
    const { id, turnId, ids, sock } = await pausedWithSocket();
    expect((await api("POST", `/v1/conversations/${id}/stop`, { turnId })).json.stopped).toBe(true);
    await sock.next((e) => e.type === "turn_end");
    const told = (sock.events as Told[]).filter((e) => e.type === "tool_result");
    expect(told.map((e) => e.tool_use_id)).toEqual(ids);
    expect(told.every((e) => e.is_error)).toBe(true);
    const order = (sock.events as Told[]).map((e) => e.type);
    expect(order.lastIndexOf("tool_result")).toBeLessThan(order.indexOf("message"));
    sock.ws?.close();
  });

  it("are each told by a tool_result event when the wait runs out", async () => {
    const { id, ids, sock } = await pausedWithSocket({ clientToolTimeoutSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1_200));
    await runDurableObjectAlarm(env.CONVERSATION.get(env.CONVERSATION.idFromName(id)));
    await sock.next((e) => e.type === "turn_end");
    const told = (sock.events as Told[]).filter((e) => e.type === "tool_result");
    expect(told.map((e) => e.tool_use_id)).toEqual(ids);
    sock.ws?.close();
  });
});
