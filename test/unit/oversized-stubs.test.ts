// Earlier messages too large for the window go as stubs of their head (core/stubs.ts fitToWindow,
// applied by buildModelRequest; core/compactor.ts step 5 in the overflow's forced pass).
import { describe, expect, it } from "vitest";
import { compactMessages } from "../../core/compactor";
import { catalogEntry } from "../../core/models/lookup";
import { buildModelRequest, windowBudgetChars } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { fitToWindow, isOversizedStub, OVERSIZED_HEAD_CHARS, oversizedStubText } from "../../core/stubs";
import type { ContentBlock, StoredMessage, WireMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

function history(texts: [role: "user" | "assistant", text: string][]): StoredMessage[] {
  return texts.map(([role, text], i) => ({
    id: `msg_${i + 1}`,
    seq: i + 1,
    role,
    content: [{ type: "text", text }],
    createdAt: "2026-01-01T00:00:00Z",
  }));
}
const textOf = (m: StoredMessage | WireMessage) => ((m.content as ContentBlock[])[0] as { text: string }).text;
const fitAt = (ms: StoredMessage[], budgetChars: number, promptNext = false) =>
  fitToWindow(ms, { conversationId: "conv_X", fixedChars: 1_000, budgetChars, promptNext });

describe("fitting the window", () => {
  const ms = history([
    ["user", "a".repeat(50_000)],
    ["assistant", "b".repeat(30_000)],
    ["user", "c".repeat(40_000)],
    ["assistant", "ok"],
    ["user", "d".repeat(60_000)],
  ]);

  it("leaves a history that fits as it is", () => {
    const out = fitAt(ms, 200_000);
    expect(out.messages).toBe(ms);
    expect(out.stubbed).toBe(0);
  });

  it("stubs the largest earlier texts first until it fits, never the turn's own prompt", () => {
    const out = fitAt(ms, 100_000);
    // 181,002 + 1,000 chars: the 50,000 and the 40,000 go; the 60,000-char prompt stays whole.
    expect(out.stubbed).toBe(2);
    expect(isOversizedStub(textOf(out.messages[0]))).toBe(true);
    expect(textOf(out.messages[1])).toBe("b".repeat(30_000));
    expect(isOversizedStub(textOf(out.messages[2]))).toBe(true);
    expect(textOf(out.messages[4])).toBe("d".repeat(60_000));
    // Nothing stored changes.
    expect(textOf(ms[0])).toBe("a".repeat(50_000));
    const stub = textOf(out.messages[0]);
    expect(stub).toContain("(message msg_1, seq 1, block 0)");
    expect(stub).toContain(
      'conversation_read {"conversation_id":"conv_X","message_id":"msg_1","block":0,"offset":500} reads the rest',
    );
    expect(stub.endsWith(`\n${"a".repeat(OVERSIZED_HEAD_CHARS)}…`)).toBe(true);
  });

  it("is byte-stable: the same history and budget give the same stubs", () => {
    expect(JSON.stringify(fitAt(ms, 100_000).messages)).toBe(JSON.stringify(fitAt(ms, 100_000).messages));
  });

  it("stubs nothing when only the turn's own prompt is too large, and everything earlier between turns", () => {
    expect(fitAt(history([["user", "z".repeat(90_000)]]), 10_000).stubbed).toBe(0);
    // Between turns the last prompt is an earlier message too: stubbed once the ones before it are not enough.
    const between = fitAt(ms, 60_000, true);
    expect(isOversizedStub(textOf(between.messages[4]))).toBe(true);
  });

  it("leaves the turn's own steps (after its prompt) to the compactor", () => {
    const turn = history([
      ["user", "a".repeat(50_000)],
      ["assistant", "ok"],
      ["user", "go"],
      ["assistant", "b".repeat(80_000)],
    ]);
    const out = fitAt(turn, 40_000);
    expect(isOversizedStub(textOf(out.messages[0]))).toBe(true);
    expect(textOf(out.messages[3])).toBe("b".repeat(80_000));
  });

  it("a built request: the estimate fits the window once the earlier prompt is a stub", () => {
    const settings = defaultSettings(SONNET);
    const big = history([
      ["user", "w ".repeat(700_000)],
      ["assistant", "ok"],
      ["user", "v ".repeat(499_000)],
    ]);
    const { request, estimate } = buildModelRequest({
      conversationId: "conv_X",
      settings,
      model: SONNET,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history: big,
    });
    expect(estimate.chars).toBeLessThanOrEqual(windowBudgetChars(settings));
    expect(isOversizedStub(textOf(request.messages[0]))).toBe(true);
    expect(textOf(request.messages[2])).toBe("v ".repeat(499_000));
  });
});

describe("fitting the window turn after turn", () => {
  const stubbedSet = (ms: StoredMessage[]) =>
    ms.flatMap((m, i) => (m.content.some((b) => b.type === "text" && isOversizedStub(b.text)) ? [i] : []));
  /** Sizes a turn's texts take, in a fixed order (a small LCG): some fit, some fill half the window. */
  function sizes(seed: number): () => number {
    const pick = [2, 2_500, 9_000, 18_000, 30_000, 45_000, 62_000];
    let x = seed;
    return () => {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      return pick[x % pick.length];
    };
  }

  it("a text stubbed before is not back whole once the last prompt is an earlier message too", () => {
    const first = history([
      ["user", "a".repeat(50_000)],
      ["assistant", "b".repeat(30_000)],
      ["user", "c".repeat(40_000)],
      ["assistant", "ok"],
      ["user", "d".repeat(60_000)],
    ]);
    const next = history([
      ["user", "a".repeat(50_000)],
      ["assistant", "b".repeat(30_000)],
      ["user", "c".repeat(40_000)],
      ["assistant", "ok"],
      ["user", "d".repeat(60_000)],
      ["assistant", "ok"],
      ["user", "next question"],
    ]);
    const before = fitAt(first, 100_000).messages;
    const after = fitAt(next, 100_000).messages;
    expect(stubbedSet(before)).toEqual([0, 2]);
    expect(stubbedSet(after)).toEqual([0, 2]);
    expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
  });

  it("every request stubs a superset of the last one's, its prefix unmoved until a new stub is needed", () => {
    for (const seed of [1, 7, 42, 2026]) {
      const size = sizes(seed);
      const turns: [role: "user" | "assistant", text: string][] = [["user", "p".repeat(size())]];
      let previous: StoredMessage[] = [];
      let previousSet: number[] = [];
      for (let turn = 0; turn < 14; turn++) {
        const out = fitAt(history(turns), 100_000).messages;
        const set = stubbedSet(out);
        expect(set, `seed ${seed}, turn ${turn}`).toEqual(expect.arrayContaining(previousSet));
        // Up to the first new stub (all of the last request when there is none) it is byte for byte the last one.
        const firstNew = set.find((i) => !previousSet.includes(i)) ?? previous.length;
        expect(JSON.stringify(out.slice(0, firstNew)), `seed ${seed}, turn ${turn}`).toBe(
          JSON.stringify(previous.slice(0, firstNew)),
        );
        turns.push(["assistant", "r".repeat(size())]);
        // The /replay view between turns stubs no more than the next request will.
        const between = stubbedSet(fitAt(history(turns), 100_000, true).messages);
        turns.push(["user", String.fromCharCode(97 + (turn % 26)).repeat(size())]);
        const nextSet = stubbedSet(fitAt(history(turns), 100_000).messages);
        expect(nextSet, `seed ${seed}, turn ${turn} between`).toEqual(expect.arrayContaining(between));
        previous = out;
        previousSet = set;
      }
      // The sequence did need stubs, and more of them as it grew.
      expect(previousSet.length).toBeGreaterThan(2);
    }
  });
});

describe("the forced pass", () => {
  it("stubs a protected earlier prompt the window cannot hold, naming the call that reads the rest", () => {
    const ms: WireMessage[] = [
      { role: "user", content: [{ type: "text", text: "p".repeat(120_000) }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      { role: "user", content: [{ type: "text", text: "q".repeat(20_000) }] },
    ];
    const refs = new Map<ContentBlock, { conversationId: string; messageId: string; block: number }>();
    ms.forEach((m, i) =>
      refs.set((m.content as ContentBlock[])[0], { conversationId: "conv_X", messageId: `msg_${i}`, block: 0 }),
    );
    const budget = {
      contextWindowTokens: 24_000,
      outputReserveTokens: 2_000,
      compactTriggerRatio: 0.75,
      compactTargetRatio: 0.5,
      charsPerToken: 1.5,
    };
    const { messages, report } = compactMessages(ms, {
      fixedChars: 1_000,
      budget,
      originOf: (b) => refs.get(b),
      taskPrompt: 2,
    });
    const first = textOf(messages[0]);
    expect(first).toBe(
      oversizedStubText({
        conversationId: "conv_X",
        messageId: "msg_0",
        role: "user",
        block: 0,
        text: "p".repeat(120_000),
      }),
    );
    expect(first).toContain(
      'conversation_read {"conversation_id":"conv_X","message_id":"msg_0","block":0,"offset":500}',
    );
    expect(textOf(messages[2])).toBe("q".repeat(20_000));
    expect(report.charsAfter).toBeLessThanOrEqual(22_000 * 1.5);
    expect(textOf(ms[0])).toBe("p".repeat(120_000));
  });
});
