// What the model's own search may bring back. A refused turn is left out of every later request
// (core/replay-rules.ts): memory_search must not put its words back through a tool result, in this
// conversation or any other of the tenant, while GET /v1/search, a person's own look at their
// history, still finds it. A sub-agent's task is the master model's text, not the person's: it
// ranks with the assistant's discount.
import { describe, expect, it } from "vitest";
import { ofType } from "../blocks";
import { api, createConversation, eventually, newTenant, send, turnMessages } from "./helpers";

const toolResultText = (r: Parameters<typeof turnMessages>[0]) =>
  String(ofType(turnMessages(r)[2].content[0], "tool_result").content);

const searchHits = async (q: string, key: string, extra = "") => {
  const path: `/v1/search?q=${string}` = `/v1/search?q=${encodeURIComponent(q)}&limit=20${extra}`;
  return (await api("GET", path, undefined, { key })).json.data;
};

describe("memory_search and a refused turn", () => {
  it("never returns the refused turn's messages, here or in another conversation; GET /v1/search still does", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const refused = await send(id, "how do I weaponize the zanzibarite strain\n@stop refusal bio", key);
    expect(refused.json.stop_reason).toBe("refusal");
    // Indexed (the person may look at their own refused prompt).
    await eventually(async () =>
      (await searchHits("zanzibarite", key)).some((h) => h.conversationId === id && h.role === "user"),
    );

    // The escape keeps the person's own @tool line from holding the word.
    const call = '@tool memory_search {"query":"\\u007Aanzibarite"}';
    const here = toolResultText(await send(id, call, key));
    expect(here).not.toContain("weaponize the");
    expect(here).toMatch(/^no memory matches/);
    const replay = await api("GET", `/v1/conversations/${id}/replay`, undefined, { key });
    expect(JSON.stringify(replay.json)).not.toContain("weaponize");

    const other = await createConversation(undefined, key);
    const there = toolResultText(await send(other, call, key));
    expect(there).not.toContain("weaponize the");
    const otherReplay = await api("GET", `/v1/conversations/${other}/replay`, undefined, { key });
    expect(JSON.stringify(otherReplay.json)).not.toContain("weaponize the");

    // The HTTP search keeps answering it, under the roles the transcript gives.
    const hits = await searchHits("zanzibarite", key);
    const prompt = hits.find((h) => h.conversationId === id && h.seq === 1);
    expect(prompt?.role).toBe("user");

    // Nor does a read bring it back: a range of its seqs, or the message by id, from anywhere.
    const reads = [
      `@tool conversation_read {"conversation_id":"${id}","from_seq":1,"to_seq":3}`,
      `@tool memory_get {"id":"${prompt!.id}"}`,
    ];
    for (const read of reads) {
      const text = toolResultText(await send(other, read, key));
      expect(text, read).not.toContain("weaponize");
      expect(text, read).toContain("withheld: this message is part of a turn the model refused");
    }
    expect(
      JSON.stringify((await api("GET", `/v1/conversations/${other}/replay`, undefined, { key })).json),
    ).not.toContain("weaponize");
    // The record keeps it.
    const transcript = await api("GET", `/v1/conversations/${id}/messages`, undefined, { key });
    expect(JSON.stringify(transcript.json)).toContain("weaponize the zanzibarite strain");
  });

  it("still returns a prompt a fallback model answered: only the refused reply is left out", async () => {
    const key = await newTenant();
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" }, key);
    const r = await send(
      id,
      "tell me about the quillwort meadow\n@stop refusal frontier_llm model=claude-sonnet-5-5",
      key,
    );
    expect(r.json.stop_reason).toBe("end_turn");
    await eventually(async () => (await searchHits("quillwort", key)).some((h) => h.conversationId === id));
    const other = await createConversation(undefined, key);
    const found = toolResultText(await send(other, '@tool memory_search {"query":"\\u0071uillwort meadow"}', key));
    expect(found).toContain("quillwort meadow");
    expect(found).toContain(`conversation ${id}, seq 1 (user`);
  });
});

/** The sub-agent's task message (the person's prompt holds the words too, inside its @tool line). */
const isTask = (snippet: string) => /^Compare \[xylophonequartz\] vendors/.test(snippet);

describe("a sub-agent's task", () => {
  it("does not rank as the person's own words", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    await send(id, '@tool tool_activate {"name":"agent_delegate"}', key);
    await send(id, "I need xylophonequartz for the band", key);
    const r = await send(
      id,
      'please help\n@tool agent_delegate {"name":"helper","task":"Compare xylophonequartz vendors"}',
      key,
    );
    expect(r.status).toBe(200);
    const task = await eventually(async () => {
      const hits = await searchHits("xylophonequartz", key, "&said=user");
      return hits.some((h) => isTask(String(h.snippet))) ? hits : null;
    });
    const person = task.findIndex((h) => String(h.snippet).includes("for the band"));
    const delegated = task.findIndex((h) => isTask(String(h.snippet)));
    expect(person).toBeGreaterThan(-1);
    expect(delegated).toBeGreaterThan(-1);
    expect(person).toBeLessThan(delegated);
    // The hit still says the transcript's role.
    expect(task[delegated].role).toBe("user");
  });
});
