// The thinking guard: a thinking block goes back while nothing before it moved, and from the first
// block whose prefix moved (or that it never saw produced) on, every thinking block is left out.
import { describe, expect, it } from "vitest";
import { ThinkingGuard } from "../../agent/thinking-guard";
import type { ContentBlock, ModelRequest } from "../../core/types";

const text = (t: string): ContentBlock => ({ type: "text", text: t });
const think = (sig: string): ContentBlock => ({ type: "thinking", thinking: "", signature: sig });
const use = (id: string): ContentBlock => ({ type: "tool_use", id, name: "read", input: { id } });
const result = (id: string, body = "ok"): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: body });

const base = (messages: ModelRequest["messages"], system = "sys"): ModelRequest => ({ model: "m", max_tokens: 10, system: [{ type: "text", text: system }], tools: [], messages });

/** A two-step tool loop as the API produced it: the guard saw both replies. */
function loop() {
  const guard = new ThinkingGuard();
  const first = base([{ role: "user", content: [text("go")] }]);
  const reply1 = [think("a"), use("t1")];
  guard.record(first, reply1);
  const second = base([{ role: "user", content: [text("go")] }, { role: "assistant", content: reply1 }, { role: "user", content: [result("t1")] }]);
  const reply2 = [think("b"), use("t2")];
  guard.record(second, reply2);
  const third = base([...second.messages, { role: "assistant", content: reply2 }, { role: "user", content: [result("t2")] }]);
  return { guard, third };
}

describe("ThinkingGuard", () => {
  it("sends every block back unchanged while the prefix is the one it was produced after", () => {
    const { guard, third } = loop();
    expect(guard.apply(third)).toBe(third);
    // cache_control and how same-role turns are split do not count as a change.
    const marked = { ...third, messages: third.messages.map((m, i) => (i === 4 ? { ...m, content: [{ ...result("t2"), cache_control: { type: "ephemeral" as const } }] } : m)) };
    expect(guard.apply(marked)).toBe(marked);
  });

  it("leaves out every block after a change to the system prompt or the tools", () => {
    const { guard, third } = loop();
    const out = guard.apply({ ...third, system: [{ type: "text", text: "sys, a new day's map" }] });
    expect(JSON.stringify(out.messages)).not.toContain('"thinking"');
    expect(out.messages[1].content).toEqual([use("t1")]);
    const tools = guard.apply({ ...third, tools: [{ name: "activated", description: "d", input_schema: { type: "object" } }] });
    expect(JSON.stringify(tools.messages)).not.toContain('"thinking"');
  });

  it("keeps the blocks before a change and leaves out those after it (removing from the end)", () => {
    const { guard, third } = loop();
    const compacted = { ...third, messages: third.messages.map((m, i) => (i === 2 ? { ...m, content: [result("t1", "[TRUNCATED]")] } : m)) };
    const out = guard.apply(compacted);
    expect(out.messages[1].content).toEqual([think("a"), use("t1")]);
    expect(out.messages[3].content).toEqual([use("t2")]);
  });

  it("leaves out a block it never saw produced, and drops a message the removal empties", () => {
    const guard = new ThinkingGuard();
    const request = base([{ role: "user", content: [text("a")] }, { role: "assistant", content: [think("x")] }, { role: "user", content: [text("go on")] }]);
    expect(guard.apply(request).messages).toEqual([{ role: "user", content: [text("a"), text("go on")] }]);
  });

  it("restores what an earlier instance of the turn recorded", () => {
    const { guard, third } = loop();
    expect(new ThinkingGuard(guard.snapshot()).apply(third)).toBe(third);
  });
});
