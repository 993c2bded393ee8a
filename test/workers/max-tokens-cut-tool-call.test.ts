// A reply cut at max_tokens that holds a complete tool call: the turn goes on (docs/api-notes.md
// "Stop reasons and stream failures"). The cut reply's calls are never run (with the real API a cut
// call's input may be incomplete): each is answered at once with an error result asking the model
// to make it again, saved and told as a tool_result event, and the next call gets more room.
import { describe, expect, it } from "vitest";
import type { ToolResultBlock } from "../../core/types";
import { api, createConversation, eventually, sseEventsOf, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("a reply cut at max_tokens after a complete tool call", () => {
  it("answers the call as not run, continues the turn with more room, and never pauses on it", async () => {
    const id = await createConversation({ outputReserveTokens: 200 });
    // The first call fits the 200-token output budget; the second does not (the offline model never half-writes a call).
    const content = `@tool get_weather {"city":"Paris"}\n@tool get_weather {"city":"${"x ".repeat(600)}"}`;
    const r = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content, tools: [weather] },
      { headers: { accept: "text/event-stream" } },
    );
    const events = sseEventsOf(r.text).map((e) => ({
      type: e.type,
      data: e.data as unknown as Record<string, unknown>,
    }));
    const t = await transcript(id);
    const at = t.findIndex((m) => m.role === "assistant");
    const reply = t[at];
    const calls = reply.content.filter((b) => b.type === "tool_use");
    expect(reply.stopReason).toBe("max_tokens");
    expect(calls).toHaveLength(1);
    const callId = (calls[0] as { id: string }).id;

    // Answered at once, in the very next message, as an error saying why it did not run.
    const answer = t[at + 1];
    expect(answer.role).toBe("user");
    const results = answer.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ tool_use_id: callId, is_error: true });
    expect(JSON.stringify(results[0].content)).toContain("cut off at max_tokens");

    // The turn went on: a further reply, and it ended as the model finished, not at the cut.
    expect(t.slice(at + 2).some((m) => m.role === "assistant")).toBe(true);
    const end = events.find((e) => e.type === "turn_end");
    expect(end?.data.stop_reason).toBe("end_turn");
    // Not run, not relayed to the client: the result is the platform's, told as such.
    expect(events.map((e) => e.type)).not.toContain("requires_action");
    expect(events.find((e) => e.type === "tool_result")?.data).toMatchObject({ tool_use_id: callId, is_error: true });
    // Told as every call is: its tool_use event first.
    const told = events.findIndex((e) => e.type === "tool_use" && e.data.id === callId);
    expect(told).toBeGreaterThanOrEqual(0);
    expect(told).toBeLessThan(events.findIndex((e) => e.type === "tool_result"));

    // The continuation's request had more output room than the cut one.
    const prompts = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(prompts.length).toBeGreaterThanOrEqual(2);
    const sent = await Promise.all(
      prompts.map((p: { id: number }) =>
        eventually(async () => {
          const s = await api("GET", `/v1/conversations/${id}/prompts/${p.id}`);
          return s.status === 200 ? (s.json as { max_tokens: number }) : null;
        }),
      ),
    );
    // Newest first: the continuation asked for more than the call that was cut.
    expect(sent[0].max_tokens).toBeGreaterThan(sent.at(-1)!.max_tokens);
  });
});
