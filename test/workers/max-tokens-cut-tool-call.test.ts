// A reply cut at max_tokens that holds tool calls: the turn goes on (docs/api-notes.md "Stop
// reasons and stream failures"). The cut reply's calls are never run (a cut call's input may be
// incomplete): each is answered at once with an error result asking the model to make it again,
// saved and told as a tool_result event, and the next call gets more room. The offline model cuts a
// call as the API does (its input JSON stopped where the budget ran out, read by the SDK's partial
// parse), so the turn meets a genuinely cut call here, not only a whole one in a cut reply.
import { describe, expect, it } from "vitest";
import type { ToolResultBlock, ToolUseBlock } from "../../core/types";
import { api, createConversation, eventually, sseEventsOf, type TranscriptMessage, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: {
    type: "object",
    properties: { city: { type: "string" }, notes: { type: "string" } },
    required: ["city"],
  },
};

interface SentRequest {
  max_tokens: number;
  messages: { role: string; content: string | { type: string; id?: string; tool_use_id?: string }[] }[];
}

/** A turn asked for as SSE with the weather tool: its events and the transcript after it. */
async function cutTurn(id: string, content: string) {
  const r = await api(
    "POST",
    `/v1/conversations/${id}/messages`,
    { content, tools: [weather] },
    { headers: { accept: "text/event-stream" } },
  );
  const events = sseEventsOf(r.text).map((e) => ({ type: e.type, data: e.data as unknown as Record<string, unknown> }));
  const t = await transcript(id);
  const at = t.findIndex((m) => m.role === "assistant");
  return { events, t, at, reply: t[at] as TranscriptMessage };
}

/** The model requests of the conversation as sent, newest first. */
async function sentRequests(id: string): Promise<SentRequest[]> {
  const prompts = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
  return Promise.all(
    prompts.map((p: { id: number }) =>
      eventually(async () => {
        const s = await api("GET", `/v1/conversations/${id}/prompts/${p.id}`);
        return s.status === 200 ? (s.json as unknown as SentRequest) : null;
      }),
    ),
  );
}

const callsOf = (m: TranscriptMessage) => m.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
const resultsOf = (m: TranscriptMessage) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result");

describe("a reply cut at max_tokens with tool calls in it", () => {
  it("answers a whole call and the cut one as not run, continues the turn with more room, and never pauses on them", async () => {
    const id = await createConversation({ outputReserveTokens: 200 });
    // The first call fits the 200-token output budget; the second is cut where the budget runs out.
    const content = `@tool get_weather {"city":"Paris"}\n@tool get_weather {"city":"${"x ".repeat(600)}"}`;
    const { events, t, at, reply } = await cutTurn(id, content);
    const calls = callsOf(reply);
    expect(reply.stopReason).toBe("max_tokens");
    expect(calls).toHaveLength(2);
    expect(calls[0].input).toEqual({ city: "Paris" });
    // The second call's city was cut open: the partial reading drops it.
    expect(calls[1].input).toEqual({});
    const callIds = calls.map((c) => c.id);

    // Answered at once, in the very next message, as errors saying why they did not run.
    const answer = t[at + 1];
    expect(answer.role).toBe("user");
    const results = resultsOf(answer);
    expect(results.map((r) => r.tool_use_id)).toEqual(callIds);
    for (const result of results) {
      expect(result.is_error).toBe(true);
      expect(JSON.stringify(result.content)).toContain("cut off at max_tokens");
    }

    // The turn went on: a further reply, and it ended as the model finished, not at the cut.
    expect(t.slice(at + 2).some((m) => m.role === "assistant")).toBe(true);
    const end = events.find((e) => e.type === "turn_end");
    expect(end?.data.stop_reason).toBe("end_turn");
    // Not run, not relayed to the client: the results are the platform's, told as such.
    expect(events.map((e) => e.type)).not.toContain("requires_action");
    const told = events.filter((e) => e.type === "tool_result").map((e) => e.data);
    expect(told.map((r) => [r.tool_use_id, r.is_error])).toEqual(callIds.map((c) => [c, true]));
    // Told as every call is: its tool_use event first.
    for (const callId of callIds) {
      const use = events.findIndex((e) => e.type === "tool_use" && e.data.id === callId);
      expect(use).toBeGreaterThanOrEqual(0);
      expect(use).toBeLessThan(events.findIndex((e) => e.type === "tool_result" && e.data.tool_use_id === callId));
    }

    // Newest first: the continuation asked for more than the call that was cut.
    const sent = await sentRequests(id);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent[0].max_tokens).toBeGreaterThan(sent.at(-1)!.max_tokens);
  });

  it("meets a genuinely cut call: not run, the model told so, more room next, every tool_use answered in the request after it", async () => {
    // No up-front thinking (only the note before the call), so the budget reaches the call.
    const id = await createConversation({ outputReserveTokens: 200, thinking: "between_tools" });
    // One call whose input is far past the budget: the API cuts it in its notes, after the city.
    const notes = "cloud cover rain wind ".repeat(150).trim();
    const { events, t, at, reply } = await cutTurn(id, `@tool get_weather ${JSON.stringify({ city: "Paris", notes })}`);
    expect(reply.stopReason).toBe("max_tokens");
    // The call as the cut left it: the city finished, the notes cut open and dropped by the partial reading.
    const [call, ...more] = callsOf(reply);
    expect(more).toEqual([]);
    expect(call).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
    // Streamed to the client as a call, then answered by the platform, never run nor relayed.
    expect(events.find((e) => e.type === "tool_use" && e.data.id === call.id)?.data.input).toEqual({ city: "Paris" });
    expect(events.map((e) => e.type)).not.toContain("requires_action");
    const told = events.find((e) => e.type === "tool_result")?.data;
    expect(told).toMatchObject({ tool_use_id: call.id, is_error: true });

    // The model is told, in the very next message, that the call did not run and to make it again.
    const [result, ...others] = resultsOf(t[at + 1]);
    expect(others).toEqual([]);
    expect(t[at + 1].role).toBe("user");
    expect(result).toMatchObject({ tool_use_id: call.id, is_error: true });
    expect(JSON.stringify(result.content)).toContain(
      "not run: your reply was cut off at max_tokens before it finished, so this call may be incomplete; make the call again",
    );
    const end = events.find((e) => e.type === "turn_end");
    expect(end?.data.stop_reason).toBe("end_turn");

    // The requests as sent: the cut one, then the next with more output room, carrying the cut call
    // as the model left it and its result first in the user message right after it (the API's rule;
    // the offline model, as strict, answered it).
    const [next, ...before] = await sentRequests(id);
    const cut = before.at(-1)!;
    expect(next.max_tokens).toBeGreaterThan(cut.max_tokens);
    // The cut reply spent its whole budget, as the API's does.
    expect(reply.usage?.output_tokens).toBe(cut.max_tokens);
    const asked = next.messages.findIndex(
      (m) => m.role === "assistant" && Array.isArray(m.content) && m.content.some((b) => b.id === call.id),
    );
    expect(asked).toBeGreaterThanOrEqual(0);
    const sentCall = (next.messages[asked].content as { id?: string; input?: unknown }[]).find((b) => b.id === call.id);
    expect(sentCall?.input).toEqual({ city: "Paris" });
    for (const [i, m] of next.messages.entries()) {
      if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
      const ids = m.content.flatMap((b) => (b.type === "tool_use" && b.id ? [b.id] : []));
      if (!ids.length) continue;
      const following = next.messages[i + 1];
      expect(following?.role).toBe("user");
      const blocks = Array.isArray(following.content) ? following.content : [];
      expect(blocks.slice(0, ids.length).map((b) => [b.type, b.tool_use_id])).toEqual(
        ids.map((callId) => ["tool_result", callId]),
      );
    }
  });
});
