// Workflow mode: a sub-agent's thread is saved as an agent-tagged segment (transcript, index)
// and never replays into the master's requests; the master sees the run once, as its result.
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, send, textOf, transcript } from "./helpers";
import { ofType, resultText } from "../blocks";

const replay = async (id: string) => (await api("GET", `/v1/conversations/${id}/replay`)).json;
const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

/** A master turn that delegates `task` (the sub-agent's own prompt, offline-model directives included). */
const delegateTurn = (name: string, task: string) => `@tool agent_delegate ${JSON.stringify({ name, task })}`;

describe("workflow mode", () => {
  it("saves the sub-agent's thread as a tagged segment that the master's next turn does not replay", async () => {
    const id = await createConversation();
    const marker = "ZEBRA-LEDGER-7731";
    await send(id, `The budget line is ${marker}.\n@tool tool_activate {"name":"agent_delegate"}`);
    // The sub-agent reads the conversation's first message (the marker) and reports on it.
    const task = `Find the budget line and report it.\n@tool conversation_read {"conversation_id":"${id}","from_seq":1,"to_seq":1}`;
    const turn = await send(id, delegateTurn("reader", task));
    expect(turn.status).toBe(200);
    expect(turn.json.stop_reason).toBe("end_turn");

    const all = await transcript(id);
    const segment = all.filter((m) => m.agent);
    // user task, assistant tool call, tool results, final answer: all saved, all tagged alike.
    expect(segment.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const delegateCall = all.find(
      (m) => !m.agent && m.content.some((b) => b.type === "tool_use" && b.name === "agent_delegate"),
    );
    const callId = delegateCall!.content.find((b) => b.type === "tool_use")!.id;
    expect(new Set(segment.map((m) => JSON.stringify(m.agent)))).toEqual(
      new Set([JSON.stringify({ segment: segment[0].agent!.segment, name: "reader", toolUseId: callId })]),
    );
    expect(textOf(segment[0])).toBe(task);
    expect(textOf(segment[2])).toContain(marker);
    // The segment sits between the master's call and its result, and the result carries the answer.
    const resultMessage = all.find(
      (m) => !m.agent && m.content.some((b) => b.type === "tool_result" && b.tool_use_id === callId),
    );
    expect(resultMessage!.seq).toBe(segment[3].seq + 1);
    const answer = textOf(segment[3]);
    const result = resultText(ofType(resultMessage!.content[0], "tool_result"));
    expect(result).toContain(answer);
    expect(result).toContain(
      `conversation_read {"conversation_id":"${id}","from_seq":${segment[0].seq},"to_seq":${segment[3].seq}}`,
    );

    // Next turn: the segment's messages are not replayed; the marker its tool read appears only
    // where the master itself has it (the first message), never a second time.
    expect((await send(id, "thanks")).status).toBe(200);
    const next = (await replay(id)).messages;
    const nextJson = JSON.stringify(next);
    expect(count(nextJson, marker)).toBe(1);
    const innerCallId = segment[1].content.find((b) => b.type === "tool_use")!.id;
    expect(nextJson).not.toContain(innerCallId);
    expect(
      next.some((m) => typeof m.content !== "string" && m.content.some((b) => b.type === "text" && b.text === task)),
    ).toBe(false);
    // ...and the model calls of that turn (prompt snapshots) never carried it either.
    const snapshots = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(snapshots.length).toBeGreaterThan(0);
    for (const s of snapshots.slice(0, 2)) {
      const request = JSON.stringify((await api("GET", `/v1/conversations/${id}/prompts/${s.id}`)).json.messages);
      expect(count(request, marker)).toBe(1);
      expect(request).not.toContain(innerCallId);
    }

    // Nothing lost: the segment is in the index.
    const found = await eventually(async () => {
      const r = await api("GET", `/v1/search?q=${encodeURIComponent("budget line report")}&conversation=${id}`);
      return r.json.data.some((h) => h.messageId === segment[0].id);
    });
    expect(found).toBe(true);
  });

  it("weighs only the master's thread towards the fold threshold", async () => {
    const id = await createConversation();
    await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
    const before = (await api("GET", `/v1/conversations/${id}`)).json.unsummarizedChars;
    await send(id, delegateTurn("writer", "Draft the report.\n@reply-chars 20000"));
    const all = await transcript(id);
    const answer = textOf(all.filter((m) => m.agent).at(-1)!);
    expect(answer.length).toBeGreaterThan(15_000);
    const grown = (await api("GET", `/v1/conversations/${id}`)).json.unsummarizedChars - before;
    // The answer counts once (in the master's tool_result), not once more for the segment.
    expect(grown).toBeGreaterThan(answer.length);
    expect(grown).toBeLessThan(answer.length * 1.5);
  });

  it("does not let a sub-agent delegate further, and is unavailable until activated", async () => {
    const id = await createConversation();
    const inactive = await send(id, delegateTurn("a", "hello"));
    expect(inactive.json.messages[2].content[0]).toMatchObject({ is_error: true });
    expect(inactive.json.messages[2].content[0].content).toContain('tool_activate {"name":"agent_delegate"}');

    await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
    await send(id, delegateTurn("outer", delegateTurn("inner", "deeper")));
    const segment = (await transcript(id)).filter((m) => m.agent);
    expect(segment.every((m) => m.agent!.name === "outer")).toBe(true);
    const nested = segment.find((m) => m.role === "user" && m.content[0].type === "tool_result");
    expect(nested!.content[0]).toMatchObject({ is_error: true });
    expect(resultText(ofType(nested!.content[0], "tool_result"))).toMatch(/unknown tool|cannot delegate/);
  });
});
