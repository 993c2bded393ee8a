// Which thinking blocks a request carries: each goes back while the prefix it was produced after
// (stored with its message) is unchanged; from the first block whose prefix moved, every later one is
// left out; a block with no recorded prefix (never sent) is left out alone.
import { describe, expect, it } from "vitest";
import { keepValidThinking, knownThinking, thinkingPrefixes } from "../../core/thinking-guard";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";

const text = (t: string): ContentBlock => ({ type: "text", text: t });
const think = (sig: string): ContentBlock => ({ type: "thinking", thinking: "", signature: sig });
const use = (id: string): ContentBlock => ({ type: "tool_use", id, name: "read", input: { id } });
const secret = (password: string): ContentBlock => ({ type: "tool_use", id: "t1", name: "read", input: { password } });
const result = (id: string, body = "ok"): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: body });

const base = (messages: ModelRequest["messages"], system = "sys"): ModelRequest => ({
  model: "m",
  max_tokens: 10,
  system: [{ type: "text", text: system }],
  tools: [],
  messages,
});
const stored = (role: "user" | "assistant", content: ContentBlock[], thinkingPrefixes?: string[]): StoredMessage => ({
  id: "x",
  seq: 1,
  role,
  content,
  createdAt: "",
  ...(thinkingPrefixes ? { thinkingPrefixes } : {}),
});

/** A two-step tool loop then a second turn, as the API produced it: each reply stored with its prefixes. */
function conversation() {
  const first = base([{ role: "user", content: [text("go")] }]);
  const reply1 = [think("a"), use("t1")];
  const second = base([
    ...first.messages,
    { role: "assistant", content: reply1 },
    { role: "user", content: [result("t1")] },
  ]);
  const reply2 = [think("b"), text("done")];
  const third = base([
    ...second.messages,
    { role: "assistant", content: reply2 },
    { role: "user", content: [text("next question")] },
  ]);
  const history = [
    stored("user", [text("go")]),
    stored("assistant", reply1, thinkingPrefixes(first, reply1)),
    stored("user", [result("t1")]),
    stored("assistant", reply2, thinkingPrefixes(second, reply2)),
    stored("user", [text("next question")]),
  ];
  return { third, known: knownThinking(history) };
}

describe("the thinking guard", () => {
  it("sends every block back, earlier turns' too, while each prefix is the one it was produced after", () => {
    const { third, known } = conversation();
    expect(keepValidThinking(third, known)).toBe(third);
    // cache_control and how same-role turns are split do not count as a change.
    const marked = {
      ...third,
      messages: third.messages.map((m, i) =>
        i === 4 ? { ...m, content: [{ ...text("next question"), cache_control: { type: "ephemeral" as const } }] } : m,
      ),
    };
    expect(keepValidThinking(marked, known)).toBe(marked);
  });

  it("leaves out every block after a change to the system prompt or the tools", () => {
    const { third, known } = conversation();
    const out = keepValidThinking({ ...third, system: [{ type: "text", text: "sys, a new day's map" }] }, known);
    expect(JSON.stringify(out.messages)).not.toContain('"thinking"');
    expect(out.messages[1].content).toEqual([use("t1")]);
    const tools = keepValidThinking(
      { ...third, tools: [{ name: "activated", description: "d", input_schema: { type: "object" } }] },
      known,
    );
    expect(JSON.stringify(tools.messages)).not.toContain('"thinking"');
  });

  it("keeps the blocks before a change and leaves out those after it (removing from the end)", () => {
    const { third, known } = conversation();
    const stubbed = {
      ...third,
      messages: third.messages.map((m, i) => (i === 2 ? { ...m, content: [result("t1", "[a stub]")] } : m)),
    };
    const out = keepValidThinking(stubbed, known);
    expect(out.messages[1].content).toEqual([think("a"), use("t1")]);
    expect(out.messages[3].content).toEqual([text("done")]);
  });

  it("cuts a block whose earlier thinking changed, as the API binds a block to the blocks before it", () => {
    const { third, known } = conversation();
    const withoutFirst = {
      ...third,
      messages: third.messages.map((m, i) => (i === 1 ? { ...m, content: [use("t1")] } : m)),
    };
    expect(keepValidThinking(withoutFirst, known).messages[3].content).toEqual([text("done")]);
  });

  it("leaves out a block it has no prefix for, alone, and drops a message the removal empties", () => {
    const request = base([
      { role: "user", content: [text("a")] },
      { role: "assistant", content: [think("x")] },
      { role: "user", content: [text("go on")] },
    ]);
    expect(keepValidThinking(request, new Map()).messages).toEqual([
      { role: "user", content: [text("a"), text("go on")] },
    ]);
    // An unknown block moves no one's prefix: a known block after it still goes back.
    const { third, known } = conversation();
    const imported = {
      ...third,
      messages: [
        { role: "user" as const, content: [text("go")] },
        { role: "assistant" as const, content: [think("imported"), ...(third.messages[1].content as ContentBlock[])] },
        ...third.messages.slice(2),
      ],
    };
    const out = keepValidThinking(imported, known);
    expect(out.messages[1].content).toEqual([think("a"), use("t1")]);
    expect(out.messages[3].content).toEqual([think("b"), text("done")]);
  });

  it("sends back thinking produced after an earlier block stopped going back (a new day's prompt), turn after turn", () => {
    // Day 1: T1. Day 2 (a new system prompt): T1 no longer goes back; T2 is produced without it.
    const day1 = base([{ role: "user", content: [text("one")] }], "day 1");
    const t1 = [think("t1"), text("a")];
    const day2 = base(
      [
        { role: "user", content: [text("one")] },
        { role: "assistant", content: [text("a")] },
        { role: "user", content: [text("two")] },
      ],
      "day 2",
    );
    const t2 = [think("t2"), use("x")];
    const history = [
      stored("user", [text("one")]),
      stored("assistant", t1, thinkingPrefixes(day1, t1)),
      stored("user", [text("two")]),
      stored("assistant", t2, thinkingPrefixes(day2, t2)),
    ];
    const next = base(
      [
        { role: "user", content: [text("one")] },
        { role: "assistant", content: t1 },
        { role: "user", content: [text("two")] },
        { role: "assistant", content: t2 },
        { role: "user", content: [result("x")] },
      ],
      "day 2",
    );
    const out = keepValidThinking(next, knownThinking(history));
    expect(out.messages[1].content).toEqual([text("a")]);
    expect(out.messages[3].content).toEqual(t2);
  });

  it("never drops part of the latest assistant message's thinking: one block that cannot go back takes the others", () => {
    const first = base([{ role: "user", content: [text("go")] }]);
    // A reply with a note between two calls; the stored first call has its secret input withheld.
    const reply = [think("a"), secret("hunter2"), think("b"), use("t2")];
    const history = [stored("user", [text("go")]), stored("assistant", reply, thinkingPrefixes(first, reply))];
    const sent = base([
      { role: "user", content: [text("go")] },
      { role: "assistant", content: [think("a"), secret("[withheld]"), think("b"), use("t2")] },
      { role: "user", content: [result("t1"), result("t2")] },
    ]);
    expect(keepValidThinking(sent, knownThinking(history)).messages[1].content).toEqual([
      secret("[withheld]"),
      use("t2"),
    ]);
  });

  it("never sends a block that lost its signature (a reply cut before it arrived)", () => {
    const first = base([{ role: "user", content: [text("go")] }]);
    const cut = [think("")];
    const history = [stored("user", [text("go")]), stored("assistant", cut, thinkingPrefixes(first, cut))];
    const next = base([
      { role: "user", content: [text("go")] },
      { role: "assistant", content: cut },
      { role: "user", content: [text("continue")] },
    ]);
    expect(JSON.stringify(keepValidThinking(next, knownThinking(history)).messages)).not.toContain('"thinking"');
  });
});
