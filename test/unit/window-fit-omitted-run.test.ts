// A history whose earlier texts, all stubbed, still overflow the window (an import far longer than
// the window, before its folds land): the oldest run goes as one pointer message naming the
// conversation_read call that brings it back (core/stubs.ts fitToWindow).
import { describe, expect, it } from "vitest";
import { catalogEntry } from "../../core/models/lookup";
import { buildModelRequest, windowBudgetChars } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { fitToWindow, OMITTED_KEEP_RATIO, omittedRunText } from "../../core/stubs";
import { messageChars } from "../../core/render";
import type { ContentBlock, StoredMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

/** `n` exchanges of `chars`-char texts, the 3rd one's reply a tool call answered before the next prompt. */
function imported(n: number, chars: number): StoredMessage[] {
  const out: Omit<StoredMessage, "seq" | "id" | "createdAt">[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      role: "user",
      content: [{ type: "text", text: `question ${i} about topic-${i} ${"q".repeat(chars)}` }],
    });
    if (i === 2) {
      out.push({ role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "web_search", input: {} }] });
      out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] });
    }
    out.push({ role: "assistant", content: [{ type: "text", text: `answer ${i} ${"a".repeat(chars)}` }] });
  }
  return out.map((m, i) => ({ ...m, id: `msg_${i + 1}`, seq: i + 1, createdAt: "2026-01-01T00:00:00Z" }));
}

const textOf = (m: StoredMessage) => (m.content[0] as { text: string }).text;
const fitAt = (ms: StoredMessage[], budgetChars: number, promptNext = false) =>
  fitToWindow(ms, { conversationId: "conv_X", fixedChars: 1_000, budgetChars, promptNext });
const withPrompt = (ms: StoredMessage[], text: string): StoredMessage[] => [
  ...ms,
  { id: `msg_${ms.length + 1}`, seq: ms.length + 1, role: "user", content: [{ type: "text", text }], createdAt: "" },
];
const size = (ms: readonly StoredMessage[]) => ms.reduce((n, m) => n + messageChars(m), 1_000);

describe("a history the stubs cannot bring within the window", () => {
  const history = withPrompt(imported(80, 3_000), "what was topic-3 about?");

  it("leaves out the oldest run for one pointer, the kept part starting on a real prompt, within the window", () => {
    const out = fitAt(history, 100_000);
    expect(out.omitted).toBeGreaterThan(0);
    const [pointer, ack, first] = out.messages;
    expect(pointer.role).toBe("user");
    expect(ack.role).toBe("assistant");
    const last = history[out.omitted! - 1];
    expect(textOf(pointer)).toContain(
      `conversation_read {"conversation_id":"conv_X","from_seq":1,"to_seq":${last.seq}}`,
    );
    expect(textOf(pointer)).toContain("- seq 1: question 0 about topic-0");
    // The kept part opens on a prompt: no tool result whose call was left out.
    expect(first.role).toBe("user");
    expect(first.content.some((b: ContentBlock) => b.type === "tool_result")).toBe(false);
    expect(first.id).toBe(history[out.omitted!].id);
    expect(size(out.messages)).toBeLessThanOrEqual(100_000);
    // The turn's own prompt goes whole.
    expect(out.messages.at(-1)).toBe(history.at(-1));
  });

  it("names each prompt in the pointer by its words, not by an image's or a result's header", () => {
    const run: StoredMessage[] = [
      {
        id: "m1",
        seq: 1,
        role: "user",
        createdAt: "",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo".repeat(100) } },
          { type: "text", text: "What does this tide chart say about Friday?" },
        ],
      },
      {
        id: "m2",
        seq: 2,
        role: "assistant",
        createdAt: "",
        content: [{ type: "tool_use", id: "toolu_1", name: "clock", input: {} }],
      },
      {
        id: "m3",
        seq: 3,
        role: "user",
        createdAt: "",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "12:00" },
          { type: "text", text: "And what about the harbour lights?" },
        ],
      },
      { id: "m4", seq: 4, role: "assistant", createdAt: "", content: [{ type: "text", text: "ok" }] },
    ];
    const text = omittedRunText({ conversationId: "conv_X", run });
    expect(text).toContain("- seq 1: What does this tide chart say about Friday?");
    expect(text).toContain("- seq 3: And what about the harbour lights?");
  });

  it("lists no prompt of a refused turn in the pointer: a refused turn is left out of every later request", () => {
    const refusedAt = history.findIndex((m) => m.role === "assistant" && textOf(m).startsWith("answer 1 "));
    const withRefusal = history.map((m, i) => (i === refusedAt ? { ...m, stopReason: "refusal" } : m));
    const out = fitAt(withRefusal, 100_000);
    expect(out.omitted).toBeGreaterThan(refusedAt);
    const pointer = textOf(out.messages[0]);
    expect(pointer).toContain("- seq 1: question 0 about topic-0");
    expect(pointer).not.toContain("topic-1 ");
    expect(pointer).toContain('"from_seq":1');
  });

  it("is byte-stable, and the next turn's request opens with this one's bytes until it overflows again", () => {
    expect(JSON.stringify(fitAt(history, 100_000).messages)).toBe(JSON.stringify(fitAt(history, 100_000).messages));
    const before = fitAt(history, 100_000).messages;
    const next = withPrompt(
      [...history, { id: "r", seq: 999, role: "assistant", content: [{ type: "text", text: "ok" }], createdAt: "" }],
      "and topic-5?",
    );
    const after = fitAt(next, 100_000).messages;
    expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    // The /replay view (a prompt to follow) shows the same pointer as the next request sends.
    const between = fitAt(next.slice(0, -1), 100_000, true).messages;
    expect(JSON.stringify(between[0])).toBe(JSON.stringify(after[0]));
  });

  it("cuts the kept part well under the window when it moves, so the next turns seldom move it", () => {
    let ms = history;
    const pointers = new Set<string>();
    for (let turn = 0; turn < 12; turn++) {
      const out = fitAt(ms, 100_000);
      expect(size(out.messages)).toBeLessThanOrEqual(100_000);
      pointers.add(textOf(out.messages[0]));
      const reply: StoredMessage = {
        id: `r${turn}`,
        seq: 1_000 + turn,
        role: "assistant",
        content: [{ type: "text", text: "a".repeat(3_000) }],
        createdAt: "",
      };
      ms = withPrompt([...ms, reply], `turn ${turn} ${"q".repeat(3_000)}`);
    }
    // Cut to OMITTED_KEEP_RATIO of the window each time it moves: not on every turn.
    expect(OMITTED_KEEP_RATIO).toBeLessThan(1);
    expect(pointers.size).toBeLessThanOrEqual(4);
  });

  it("a built request fits the window: roles alternate from a user message, every tool call with its result", () => {
    const settings = defaultSettings(SONNET);
    const budget = windowBudgetChars(settings);
    const long = withPrompt(imported(Math.ceil(budget / 1_000), 3_000), "what was topic-3 about?");
    const { request, estimate } = buildModelRequest({
      conversationId: "conv_X",
      settings,
      model: SONNET,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history: long,
    });
    expect(estimate.chars).toBeLessThanOrEqual(budget);
    expect(request.messages[0].role).toBe("user");
    expect(JSON.stringify(request.messages[0])).toContain("are not shown here");
    request.messages.forEach((m, i) => i > 0 && expect(m.role).not.toBe(request.messages[i - 1].role));
    const calls = request.messages.flatMap((m) =>
      typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "tool_use").map((b) => b.id),
    );
    const results = request.messages.flatMap((m) =>
      typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id),
    );
    expect(results.sort()).toEqual(calls.sort());
  });

  it("leaves a history the stubs bring within the window without a pointer", () => {
    const out = fitAt(withPrompt(imported(10, 3_000), "next"), 100_000);
    expect(out.omitted ?? 0).toBe(0);
  });
});
