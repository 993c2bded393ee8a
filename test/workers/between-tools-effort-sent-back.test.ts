// Under thinking "between_tools" an effort change is refused only while a reply's thinking of the
// old effort would really go back (docs/api-notes.md, "Settings a turn runs on"): a marked reply
// the thinking guard leaves out of every later request (its prefix moved), or one of a refused
// turn (never replayed), holds nothing. The stand-in model refuses a between_tools request that
// carries thinking of another effort, so a turn after the change shows what the API would say.
import { describe, expect, it } from "vitest";
import { api, createConversation, inConversation, transcript } from "./helpers";

const ranAt = (was: string, asked: string) =>
  `settings.effort: with thinking "between_tools" the effort cannot change within a conversation: its thinking ran at ${was} (asked: ${asked}); keep ${was}, use thinking "adaptive", or start a new conversation`;

/** How many thinking blocks the next request (GET /replay) carries. */
async function replayedThinking(id: string): Promise<number> {
  const messages = (await api("GET", `/v1/conversations/${id}/replay`)).json.messages as {
    content: { type: string }[] | string;
  }[];
  return messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content)).filter((b) => b.type === "thinking")
    .length;
}

const toolTurn = (id: string, words: string) =>
  api("POST", `/v1/conversations/${id}/messages`, {
    content: `${words}\n@tool conversation_read {"from_seq":1,"to_seq":1}`,
  });

describe("between_tools effort: only thinking that goes back holds it", () => {
  it("refuses the change while the thinking of the old effort goes back", async () => {
    const id = await createConversation({ thinking: "between_tools", effort: "high" });
    const first = await toolTurn(id, "read");
    expect([first.status, first.json.stop_reason]).toEqual([200, "end_turn"]);
    expect((await transcript(id)).find((m) => m.betweenToolsEffort)?.betweenToolsEffort).toBe("high");
    expect(await replayedThinking(id)).toBeGreaterThan(0);
    const p = await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } });
    expect(p.status).toBe(400);
    expect(p.json.error?.message).toBe(ranAt("high", "medium"));
    // The same effort is taken, and the next turn runs.
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "high" } })).status).toBe(200);
    const second = await toolTurn(id, "again");
    expect([second.status, second.json.stop_reason]).toEqual([200, "end_turn"]);
  });

  it("takes the change once the prefix moved and the thinking no longer goes back (a tool activated)", async () => {
    const id = await createConversation({ thinking: "between_tools", effort: "high" });
    expect((await toolTurn(id, "read")).json.stop_reason).toBe("end_turn");
    expect(await replayedThinking(id)).toBeGreaterThan(0);
    const activate = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool tool_activate {"name":"agent_delegate"}`,
    });
    expect([activate.status, activate.json.stop_reason]).toEqual([200, "end_turn"]);
    // The tools moved: the guard leaves every earlier thinking block out of the requests from now on.
    expect((await transcript(id)).filter((m) => m.betweenToolsEffort === "high").length).toBeGreaterThan(0);
    expect(await replayedThinking(id)).toBe(0);
    const p = await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } });
    expect(p.status, p.text).toBe(200);
    expect(p.json.settings.effort).toBe("medium");
    const next = await toolTurn(id, "again");
    expect([next.status, next.json.stop_reason], next.text).toEqual([200, "end_turn"]);
    // Its thinking now goes back at medium: back to high is refused.
    expect((await transcript(id)).at(-3)?.betweenToolsEffort).toBe("medium");
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "high" } })).json.error?.message).toBe(
      ranAt("medium", "high"),
    );
  });

  it("does not count the earlier replies of a refused turn, which is never replayed", async () => {
    const id = await createConversation({ thinking: "between_tools", effort: "high" });
    // The stand-in refuses only a prompt's first call: the turn's tool step is run for real (its
    // thinking marked high), its next call fails, and the refusal that step got is stored after it.
    const failed = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `read\n@tool conversation_read {"from_seq":1,"to_seq":1}\n@model-error 400 call=2`,
    });
    expect(failed.status).toBe(502);
    const stored = await transcript(id);
    expect(stored.map((m) => [m.role, m.betweenToolsEffort, m.content.map((b) => b.type).join(",")])).toEqual([
      ["user", undefined, "text"],
      ["assistant", "high", "thinking,tool_use"],
      ["user", undefined, "tool_result"],
    ]);
    // Its thinking goes back while the turn is not refused.
    expect(await replayedThinking(id)).toBeGreaterThan(0);
    expect(
      (await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } })).json.error?.message,
    ).toBe(ranAt("high", "medium"));
    await inConversation(id, (i) =>
      i.record.append([
        {
          role: "assistant",
          content: [{ type: "text", text: "I can't" }],
          model: "claude-sonnet-5-5",
          stopReason: "refusal",
        },
      ]),
    );
    expect(await replayedThinking(id)).toBe(0);
    const p = await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } });
    expect(p.status, p.text).toBe(200);
    const next = await toolTurn(id, "again");
    expect([next.status, next.json.stop_reason], next.text).toEqual([200, "end_turn"]);
  });
});
