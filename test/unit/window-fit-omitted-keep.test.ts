// When the pointer standing in for the oldest run moves, the kept part is cut to half the window
// (core/stubs.ts OMITTED_KEEP_RATIO): no more, so the next turns have room to grow before it moves
// again, and no less, so no more of the conversation than needed leaves the request.
import { describe, expect, it } from "vitest";
import { messageChars } from "../../core/render";
import { fitToWindow, OMITTED_POINTER_CHARS, OVERSIZED_MIN_CHARS } from "../../core/stubs";
import type { StoredMessage } from "../../core/types";

const BUDGET = 100_000;
const FIXED = 1_000;
const HALF = Math.floor(BUDGET * 0.5);
// Texts under the stub size: nothing is stubbed, so each message weighs in the fit what it weighs here.
const TEXT = 1_400;

let seq = 0;
const message = (role: StoredMessage["role"], content: StoredMessage["content"]): StoredMessage => {
  seq++;
  return { id: `msg_${seq}`, seq, role, content, createdAt: "2026-01-01T00:00:00Z" };
};

/** Exchange `i`: a prompt and its answer, every fifth with a tool step between them. */
function exchange(i: number): StoredMessage[] {
  const out = [message("user", [{ type: "text", text: `question ${i} ${"q".repeat(TEXT)}` }])];
  if (i % 5 === 2) {
    const id = `toolu_${i}`;
    out.push(message("assistant", [{ type: "tool_use", id, name: "web_search", input: { query: `topic-${i}` } }]));
    out.push(message("user", [{ type: "tool_result", tool_use_id: id, content: "r".repeat(TEXT) }]));
  }
  out.push(message("assistant", [{ type: "text", text: `answer ${i} ${"a".repeat(TEXT)}` }]));
  return out;
}

/** A real user prompt: where a kept part may start (no tool result whose call was left out). */
const isPrompt = (m: StoredMessage) => m.role === "user" && !m.content.some((b) => b.type === "tool_result");
const chars = (ms: readonly StoredMessage[]) => ms.reduce((n, m) => n + messageChars(m), 0);

describe("the kept part after a moved pointer", () => {
  it("is the longest suffix from a real prompt within half the window", () => {
    expect(TEXT + 20).toBeLessThan(OVERSIZED_MIN_CHARS);
    seq = 0;
    let history: StoredMessage[] = [];
    let omitted = 0;
    const moves: number[] = [];
    for (let turn = 0; turn < 90; turn++) {
      // The turn's request: the history up to its new prompt, as the model would be sent it.
      const [prompt, ...answer] = exchange(turn);
      history = [...history, prompt];
      const out = fitToWindow(history, {
        conversationId: "conv_X",
        fixedChars: FIXED,
        budgetChars: BUDGET,
        promptNext: false,
      });
      const now = out.omitted ?? 0;
      // A later request never brings back what an earlier one left out.
      expect(now).toBeGreaterThanOrEqual(omitted);
      if (now !== omitted) {
        // The pointer moved on this turn, so it was cut at this turn's prompt.
        moves.push(turn);
        const kept = history.slice(now);
        expect(out.messages.slice(2)).toEqual(kept);
        expect(isPrompt(kept[0])).toBe(true);
        // What the kept part makes of the request: the fixed part, the pointer's allowance and the kept messages.
        const weight = FIXED + OMITTED_POINTER_CHARS + chars(kept);
        expect(weight).toBeLessThanOrEqual(HALF);
        // One exchange more (from the real prompt before the kept part) would not fit that half.
        let previous = now - 1;
        while (previous > 0 && !isPrompt(history[previous])) previous--;
        expect(isPrompt(history[previous])).toBe(true);
        expect(weight + chars(history.slice(previous, now))).toBeGreaterThan(HALF);
      }
      omitted = now;
      history = [...history, ...answer];
    }
    // Some moves, each after the kept part regrew from half the window to the whole of it.
    expect(moves.length).toBeGreaterThanOrEqual(2);
    for (let k = 1; k < moves.length; k++) expect(moves[k] - moves[k - 1]).toBeGreaterThan(10);
  });
});
