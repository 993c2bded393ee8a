// GET /replay is the next request even when the history ends on a tool call no turn waits on (an
// imported transcript ending on a call, a step cut off before its results): a new prompt comes
// next, not results, so earlier results age into stubs as that prompt will age them. Whether results
// come next is the object's paused state, not the last message's shape.
import { describe, expect, it } from "vitest";
import type { WireMessage } from "../../core/types";
import { api, newTenant, send } from "./helpers";

const withoutBreakpoints = (messages: unknown): WireMessage[] =>
  JSON.parse(JSON.stringify(messages, (k, v: unknown) => (k === "cache_control" ? undefined : v)));

describe("GET /replay of a history ending on an unanswered tool call", () => {
  it("is the next request: results stubbed as the new prompt stubs them", { timeout: 120_000 }, async () => {
    const key = await newTenant();
    const imported = await api(
      "POST",
      "/v1/conversations/import",
      {
        messages: [
          { role: "user", content: "first question" },
          { role: "assistant", content: [{ type: "tool_use", id: "call_a", name: "lookup", input: { q: "a" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_a", content: "A".repeat(5_000) }] },
          { role: "assistant", content: "Here is what I found." },
          { role: "user", content: "second question" },
          { role: "assistant", content: [{ type: "tool_use", id: "call_b", name: "lookup", input: { q: "b" } }] },
        ],
      },
      { key },
    );
    expect(imported.status, imported.text.slice(0, 300)).toBe(201);
    const id = imported.json.id;
    const replay = await api("GET", `/v1/conversations/${id}/replay`, undefined, { key });
    expect(replay.status).toBe(200);

    const snapshotIds = async () =>
      ((await api("GET", `/v1/conversations/${id}/prompts`, undefined, { key })).json.data as { id: number }[]).map(
        (s) => s.id,
      );
    const before = Math.max(0, ...(await snapshotIds()));
    const turn = await send(id, "third question", key);
    expect(turn.status, turn.text.slice(0, 300)).toBe(200);
    const first = Math.min(...(await snapshotIds()).filter((n) => n > before));
    const sent = (await api("GET", `/v1/conversations/${id}/prompts/${first}`, undefined, { key })).json as unknown as {
      messages: WireMessage[];
    };
    const next = withoutBreakpoints(sent.messages);
    // The new prompt rides in the last user message (after the interrupted call's made-up result).
    const last = next.at(-1)!;
    expect(JSON.stringify(last.content)).toContain("third question");
    if (typeof last.content !== "string" && last.content.length > 1) last.content = last.content.slice(0, -1);
    else next.pop();

    expect(JSON.stringify(next)).toContain("[stale tool result replaced by this stub:");
    expect(replay.json.estimate.stubbedResults).toBe(1);
    expect(withoutBreakpoints(replay.json.messages)).toEqual(next);
  });
});
