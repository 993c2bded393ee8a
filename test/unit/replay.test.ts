import { describe, expect, it } from "vitest";
import { buildModelRequest, estimateRequest, INTERRUPTED_TOOL_RESULT, toWireMessages } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import type { ContentBlock, StoredMessage } from "../../core/types";

let seq = 0;
const msg = (role: "user" | "assistant", ...content: ContentBlock[]): StoredMessage => ({ id: `msg_${++seq}`, seq, role, content, createdAt: "2026-01-01T00:00:00Z" });
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const call = (id: string): ContentBlock => ({ type: "tool_use", id, name: "conversation_read", input: {} });
const result = (id: string): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: "ok" });

describe("toWireMessages", () => {
  it("replays a clean history verbatim, without ids or metadata", () => {
    const h = [msg("user", text("hi")), msg("assistant", text("hello"))];
    expect(toWireMessages(h)).toEqual([
      { role: "user", content: [text("hi")] },
      { role: "assistant", content: [text("hello")] },
    ]);
  });

  it("merges adjacent same-role messages (a failed turn's lone user message)", () => {
    const h = [msg("user", text("failed")), msg("user", text("retry")), msg("assistant", text("ok"))];
    expect(toWireMessages(h)).toEqual([
      { role: "user", content: [text("failed"), text("retry")] },
      { role: "assistant", content: [text("ok")] },
    ]);
  });

  it("answers a tool call whose result never came, without touching answered ones", () => {
    const h = [msg("user", text("go")), msg("assistant", call("a"), call("b")), msg("user", result("a")), msg("assistant", text("done"))];
    const w = toWireMessages(h);
    expect(w[2].content).toEqual([{ type: "tool_result", tool_use_id: "b", content: INTERRUPTED_TOOL_RESULT, is_error: true }, result("a")]);
    const tail = toWireMessages([msg("user", text("go")), msg("assistant", call("c"))]);
    expect(tail).toHaveLength(3);
    expect(tail[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "c", content: INTERRUPTED_TOOL_RESULT, is_error: true }] });
  });

  it("never starts on an assistant message", () => {
    expect(toWireMessages([msg("assistant", text("orphan")), msg("user", text("q"))])).toEqual([{ role: "user", content: [text("q")] }]);
  });

  it("does not mutate the stored history", () => {
    const h = [msg("user", text("a")), msg("user", text("b"))];
    const copy = structuredClone(h);
    toWireMessages(h);
    expect(h).toEqual(copy);
  });
});

describe("buildModelRequest", () => {
  it("carries the settings' model and output reserve, the system prompt and tools, and estimates at charsPerToken", () => {
    const settings = { ...defaultSettings(), charsPerToken: 2, outputReserveTokens: 1000, contextWindowTokens: 10_000 };
    const { request, estimate } = buildModelRequest({
      conversationId: "conv_X",
      settings,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history: [msg("user", text("x".repeat(100)))],
    });
    expect(request.model).toBe(settings.model);
    expect(request.max_tokens).toBe(1000);
    expect(estimate.chars).toBe(3 + 2 + 100);
    expect(estimate.tokens).toBe(Math.ceil(105 / 2));
    expect(estimate.budgetTokens).toBe(9000);
    expect(estimateRequest(request, settings)).toEqual({ ...estimate, stubbedResults: undefined, stubSavedChars: undefined, stubPendingChars: undefined });
  });
});

describe("workflow mode segments", () => {
  it("leave the master's replay, keeping its delegate call paired with its result", () => {
    const tag = { segment: "agt_1", name: "reader", toolUseId: "d1" };
    const sub = (m: StoredMessage): StoredMessage => ({ ...m, agent: tag });
    const h = [
      msg("user", text("delegate it")),
      msg("assistant", { type: "tool_use", id: "d1", name: "agent_delegate", input: { task: "read" } }),
      sub(msg("user", text("read"))),
      sub(msg("assistant", call("s1"))),
      sub(msg("user", { type: "tool_result", tool_use_id: "s1", content: "the sub-agent's bulky read" })),
      sub(msg("assistant", text("answer: 42"))),
      msg("user", { type: "tool_result", tool_use_id: "d1", content: "answer: 42" }),
      msg("assistant", text("It is 42.")),
    ];
    const { request } = buildModelRequest({ conversationId: "conv_1", settings: defaultSettings(), system: [], tools: [], history: h });
    const wire = JSON.stringify(request.messages);
    expect(request.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(wire).not.toContain("bulky read");
    expect(wire).not.toContain('"s1"');
    expect(wire.split("answer: 42").length - 1).toBe(1);
    expect(wire).not.toContain(INTERRUPTED_TOOL_RESULT);
  });
});
