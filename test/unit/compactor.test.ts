import { describe, expect, it } from "vitest";
import {
  budgetTokens,
  compactMessages,
  continuationNudge,
  effectiveTokens,
  fallbackTurnState,
  shouldCompact,
  untouchedIds,
  withRemainingIds,
} from "../../core/compactor";
import type { ContentBlock, WireMessage } from "../../core/types";
import { blockAs, blocksIn, blocksOf, toolResults } from "../blocks";

const budget = {
  contextWindowTokens: 24_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const call = (id: string): ContentBlock => ({ type: "tool_use", id, name: "file_read", input: { lines: id } });
const result = (id: string, size: number, extra: Partial<ContentBlock> = {}): ContentBlock =>
  ({ type: "tool_result", tool_use_id: id, content: `${id}:${"r".repeat(size)}`, ...extra }) as ContentBlock;

/** A monster turn: the task, then `n` tool rounds with big results, then more small steps. */
function monster(n: number, size: number): WireMessage[] {
  const ms: WireMessage[] = [{ role: "user", content: [text("read all ten slices and total them")] }];
  for (let i = 0; i < n; i++) {
    ms.push({ role: "assistant", content: [text(`step ${i}`), call(`t${i}`)] });
    ms.push({ role: "user", content: [result(`t${i}`, size)] });
  }
  return ms;
}
const size = (ms: WireMessage[]) => JSON.stringify(ms).length;
/** Where each block is stored, by identity, as the DO's replay cache knows it. */
function origins(ms: WireMessage[]) {
  const refs = new Map<ContentBlock, { conversationId: string; messageId: string; block: number }>();
  ms.forEach((m, i) =>
    (m.content as ContentBlock[]).forEach((b, j) =>
      refs.set(b, { conversationId: "conv_X", messageId: `msg_${i}`, block: j }),
    ),
  );
  return (b: ContentBlock) => refs.get(b);
}

describe("the trigger", () => {
  it("fires past 75% of (window - reserve), calibrated by the provider's count", () => {
    expect(budgetTokens(budget)).toBe(22_000);
    expect(shouldCompact(16_500, budget)).toBe(false);
    expect(shouldCompact(16_501, budget)).toBe(true);
    expect(effectiveTokens(10_000, null)).toBe(10_000);
    // The provider counted more than the estimate: its figure plus what was added since wins.
    expect(effectiveTokens(12_000, { reportedTokens: 15_000, estimateAtReport: 11_000 })).toBe(16_000);
    expect(effectiveTokens(30_000, { reportedTokens: 15_000, estimateAtReport: 11_000 })).toBe(34_000);
  });
});

describe("a compaction pass", () => {
  it("shrinks the turn to the target, largest tool results first, with labels naming the call", () => {
    const wide = { ...budget, contextWindowTokens: 40_000 };
    const ms = monster(14, 6_000);
    const { messages, report } = compactMessages(ms, { fixedChars: 3_000, budget: wide, originOf: origins(ms) });
    const targetChars = 38_000 * 0.5 * 1.5;
    expect(report.charsBefore).toBeGreaterThan(targetChars);
    expect(report.charsAfter).toBeLessThanOrEqual(targetChars);
    expect(report.tokensSaved).toBeGreaterThan(0);
    const cut = toolResults(messages).filter((b) => typeof b.content === "string" && /TRUNCATED/.test(b.content));
    expect(cut.length).toBeGreaterThan(0);
    expect(cut[0].content).toMatch(
      /\[TRUNCATED — [\d,]+ of [\d,]+ chars cut to save context; conversation_read \{"conversation_id":"conv_X","message_id":"msg_\d+","block":0\} returns the original\]/,
    );
    expect(report.targets.every((t) => t.kind === "tool_result")).toBe(true);
    // Largest first: cuts are proportional, so equal results lose equal shares.
    const cuts = report.targets.map((t) => t.before - t.after);
    expect(Math.max(...cuts) - Math.min(...cuts)).toBeLessThan(200);
  });

  it("cuts everything it may when the target is out of reach, and says how far it got", () => {
    const ms = monster(10, 8_000);
    const { report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(report.charsAfter).toBeGreaterThan(22_000 * 0.5 * 1.5);
    expect(report.targets).toHaveLength(7); // every result but the last 3
    expect(report.targets.every((t) => t.after <= 700)).toBe(true);
  });

  it("protects messages[0], the last 3 of each role and error results, and keeps every tool pair", () => {
    const ms = monster(10, 8_000);
    ms[0] = { role: "user", content: [text("TASK ".repeat(3_000))] };
    blocksIn(ms[5])[0] = result("t2", 9_000, { is_error: true });
    const { messages } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(messages[0]).toEqual(ms[0]);
    expect(messages[5]).toEqual(ms[5]);
    for (const i of [ms.length - 1, ms.length - 3, ms.length - 5, ms.length - 2, ms.length - 4, ms.length - 6])
      expect(messages[i]).toEqual(ms[i]);
    // Blocks are never removed: each tool_use still has its tool_result in the next message.
    messages.forEach((m, i) => {
      for (const b of blocksOf(m.content, "tool_use"))
        expect(blocksOf(messages[i + 1].content, "tool_result").some((r) => r.tool_use_id === b.id)).toBe(true);
    });
    expect(messages.map((m) => blocksIn(m).length)).toEqual(ms.map((m) => blocksIn(m).length));
  });

  it("draws the protection line exactly: the 4th-last result and the one just after messages[0] are cut", () => {
    const ms = monster(10, 8_000); // results at 2, 4, ..., 20
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    const cut = (i: number) => JSON.stringify(messages[i]) !== JSON.stringify(ms[i]);
    expect([20, 18, 16].map(cut)).toEqual([false, false, false]); // the last 3 results
    expect([14, 2].map(cut)).toEqual([true, true]); // one past the edge, and the oldest
    expect(cut(0)).toBe(false);
    expect(report.targets.map((t) => t.index).sort((a, b) => a - b)).toEqual([2, 4, 6, 8, 10, 12, 14]);
    // An error result at the edge stays whole, and the next older result is cut instead.
    const withError = monster(10, 8_000);
    blocksIn(withError[14])[0] = result("t6", 8_000, { is_error: true });
    const e = compactMessages(withError, { fixedChars: 0, budget, originOf: origins(withError) });
    expect(e.messages[14]).toEqual(withError[14]);
    expect(e.report.targets.map((t) => t.index)).not.toContain(14);
  });

  it("protects a prompt merged into a carrier of tool results (the turn before ended on them) as a prompt", () => {
    // The turn before stopped after its results; this turn's 3,000-char task rides the same message.
    const task = `summarize every slice carefully: ${"the exact wording matters. ".repeat(120)}`;
    const ms: WireMessage[] = [
      { role: "user", content: [text("earlier work")] },
      { role: "assistant", content: [text("reading"), call("old")] },
      { role: "user", content: [result("old", 8_000), text(task)] },
      ...monster(8, 8_000).slice(1),
    ];
    const { messages } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    // The old result is cut; the task beside it is kept whole.
    expect(JSON.stringify(messages[2])).toContain("TRUNCATED");
    expect(blocksIn(messages[2])[1]).toEqual(text(task));
  });

  it("cuts a protected result larger than the whole target to half of it, keeping its head, tail and restoring call", () => {
    // One step fetched a 1 MB answer: it is the newest result (protected), and nothing else can give enough.
    const ms = monster(2, 1_000);
    ms.push(
      { role: "assistant", content: [text("fetch the log"), call("big")] },
      { role: "user", content: [result("big", 1_000_000)] },
    );
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    const cap = Math.floor((22_000 * 0.5 * 1.5) / 2);
    const big = blockAs(blocksIn(messages.at(-1)!)[0], "tool_result").content;
    if (typeof big !== "string") throw new Error("the cut result is text");
    expect(big.length).toBeLessThanOrEqual(cap);
    expect(big.startsWith("big:rrr")).toBe(true);
    expect(big).toContain(
      `conversation_read {"conversation_id":"conv_X","message_id":"msg_${ms.length - 1}","block":0} returns the original`,
    );
    expect(report.charsAfter).toBeLessThan(22_000 * 0.5 * 1.5);
    // Protected results that fit are still left whole.
    expect(messages[2]).toEqual(ms[2]);
    expect(messages[4]).toEqual(ms[4]);
  });

  it("strips images from tool results and goes on to assistant text only when results are not enough", () => {
    const ms: WireMessage[] = [{ role: "user", content: [text("look")] }];
    ms.push({ role: "assistant", content: [text("a".repeat(20_000)), call("img")] });
    ms.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "img",
          content: [
            { type: "text", text: "shot" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "x".repeat(50_000) } },
          ],
        },
      ],
    });
    for (let i = 0; i < 3; i++)
      ms.push({ role: "assistant", content: [text("short")] }, { role: "user", content: [text("ok")] });
    const { messages, report } = compactMessages(ms, {
      fixedChars: 0,
      budget: { ...budget, contextWindowTokens: 12_000 },
      originOf: origins(ms),
    });
    expect(JSON.stringify(messages)).not.toContain('"type":"image"');
    expect(report.targets.map((t) => t.kind)).toEqual(["image", "assistant"]);
    expect(blockAs(blocksIn(messages[1])[0], "text").text).toMatch(/TRUNCATED/);
  });

  it("treats parallel results in one carrier as separate tool messages: the last 3 are kept", () => {
    const ms: WireMessage[] = [{ role: "user", content: [text("read ten slices")] }];
    ms.push({ role: "assistant", content: Array.from({ length: 10 }, (_, i) => call(`p${i}`)) });
    ms.push({ role: "user", content: Array.from({ length: 10 }, (_, i) => result(`p${i}`, 5_000)) });
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(report.targets.map((t) => t.block)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(blocksIn(messages[2]).slice(7)).toEqual(blocksIn(ms[2]).slice(7));
  });

  it("never mutates the messages it is given", () => {
    const ms = monster(6, 9_000);
    const before = JSON.stringify(ms);
    compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(JSON.stringify(ms)).toBe(before);
    expect(size(ms)).toBe(before.length);
  });
});

describe("the turn state", () => {
  it("nudges to resume from REMAINING, with a deterministic fallback", () => {
    const state = fallbackTurnState("total ten slices", [{ name: "file_read", input: { lines: "1-500" } }]);
    for (const h of ["TASK:", "PROGRESS:", "REMAINING:", "DATA:", "DECISIONS:"]) expect(state).toContain(h);
    expect(state).toContain('file_read {"lines":"1-500"}');
    expect(continuationNudge(state)).toMatch(/Resume from REMAINING[\s\S]*do not stop early/);
  });
});

describe("batch ids in REMAINING", () => {
  const task = "Tally batches b-01, b-02, b-03 and b-04 (report to ops-7).";
  const calls = [
    { name: "file_read", input: { attachment_id: "b-01" } },
    { name: "file_read", input: { attachment_id: "b-02" } },
  ];

  it("are the ids the task names that no call has touched, in the task's order", () => {
    expect(untouchedIds(task, calls)).toEqual(["b-03", "b-04", "ops-7"]);
    expect(untouchedIds(task, [])).toEqual([]); // nothing touched yet: no evidence of batch work
  });

  it("are added under REMAINING when the summary lists them elsewhere or not at all", () => {
    const state = "TASK:\n- tally\n\nPROGRESS:\n- b-01\n\nREMAINING:\n- finish\n\nDATA:\n- b-03, b-04, ops-7";
    const out = withRemainingIds(state, ["b-03", "b-04"]);
    const remaining = out.slice(out.indexOf("REMAINING:"), out.indexOf("DATA:"));
    expect(remaining).toContain("(2 ids the task names): b-03, b-04");
    expect(remaining).toContain("- finish");
    expect(withRemainingIds("TASK:\n- x", ["b-03"])).toMatch(
      /\n\nREMAINING:\n- not yet touched by any call \(1 ids the task names\): b-03$/,
    );
    // Already there: the model's own words stand.
    const complete = "REMAINING:\n- b-03 then b-04\n\nDATA:\n- none";
    expect(withRemainingIds(complete, ["b-03", "b-04"])).toBe(complete);
  });

  it("are listed by the deterministic fallback", () => {
    expect(fallbackTurnState(task, calls)).toMatch(
      /REMAINING:\n- not yet touched by any call \(3 ids the task names\): b-03, b-04, ops-7/,
    );
  });
});

describe("what a pass protects", () => {
  const state = (n: number): ContentBlock => text(continuationNudge(`state after pass ${n} ${"s".repeat(900)}`));
  /** An earlier exchange, the turn's task, then five steps of 20 KB results, the first `nudges` carrying a pass's state. */
  function withNudges(task: string, nudges: number): WireMessage[] {
    const ms: WireMessage[] = [
      { role: "user", content: [text("hello")] },
      { role: "assistant", content: [text("hi")] },
      { role: "user", content: [text(task)] },
    ];
    for (let i = 0; i < 5; i++) {
      ms.push({ role: "assistant", content: [call(`t${i}`)] });
      ms.push({ role: "user", content: [result(`t${i}`, 20_000), ...(i < nudges ? [state(i)] : [])] });
    }
    return ms;
  }

  it("counts no <turn_state> nudge as one of the last 3 prompts, and never cuts one", () => {
    const task = `Tally every batch: ${Array.from({ length: 60 }, (_, i) => `b${i}x`).join(", ")}`.padEnd(2_000, ".");
    const ms = withNudges(task, 3);
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(report.targets.length).toBeGreaterThan(0);
    expect(blocksIn(messages[2])[0]).toEqual(text(task));
    for (const i of [4, 6, 8]) expect(blocksIn(messages[i])[1]).toEqual(blocksIn(ms[i])[1]);
  });

  it("protects the turn's task prompt it is told of, however many prompts come after it", () => {
    const task = `Summarize each report in order: ${"r".repeat(2_000)}`;
    const later = (n: number) => text(`a later note ${n} ${"n".repeat(1_500)}`);
    const ms: WireMessage[] = [
      { role: "user", content: [text("hello")] },
      { role: "assistant", content: [text("hi")] },
      { role: "user", content: [text(task)] },
    ];
    for (let i = 0; i < 4; i++)
      ms.push(
        { role: "assistant", content: [text(`reply ${i} ${"a".repeat(700)}`)] },
        { role: "user", content: [later(i)] },
      );
    const tight = { ...budget, contextWindowTokens: 8_000 };
    const unprotected = compactMessages(ms, { fixedChars: 0, budget: tight, originOf: origins(ms) });
    expect(blockAs(blocksIn(unprotected.messages[2])[0], "text").text).toMatch(/TRUNCATED/);
    const told = compactMessages(ms, { fixedChars: 0, budget: tight, originOf: origins(ms), taskPrompt: 2 });
    expect(blocksIn(told.messages[2])[0]).toEqual(text(task));
    expect(told.report.targets.length).toBeGreaterThan(0);
  });

  it("cuts protected results that together pass the whole budget to half the target, the largest to one size", () => {
    // Three parallel reads, each under the target, together over the budget (33,000 chars): kept
    // whole, the next call could only overflow.
    const ms: WireMessage[] = [
      { role: "user", content: [text("read the three parts")] },
      { role: "assistant", content: [call("a"), call("b"), call("c")] },
      { role: "user", content: [result("a", 16_000), result("b", 16_000), result("c", 2_000)] },
    ];
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    const halfTarget = Math.floor((22_000 * 0.5 * 1.5) / 2);
    const [a, b, c] = toolResults(messages);
    expect(c).toEqual(blocksIn(ms[2])[2]); // under the common size: whole
    for (const cut of [a, b]) {
      expect(String(cut.content).length).toBeLessThanOrEqual(3_200);
      expect(cut.content).toMatch(/conversation_read \{"conversation_id":"conv_X","message_id":"msg_2","block":[01]\}/);
    }
    expect(report.targets.map((t) => t.block).sort()).toEqual([0, 1]);
    const results = toolResults(messages).reduce((n, r) => n + String(r.content).length, 0);
    expect(results).toBeLessThanOrEqual(halfTarget + 20);
    // Protected results that could fit stay whole (the budget is not passed).
    const fits = structuredClone(ms);
    blocksIn(fits[2])[0] = result("a", 12_000);
    expect(compactMessages(fits, { fixedChars: 0, budget, originOf: origins(fits) }).report.targets).toEqual([]);
  });

  it("leaves images the model has not looked at yet, and words a stripped image's label as a stub does", () => {
    const image = (): ContentBlock =>
      ({
        type: "image",
        source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo".repeat(10) },
      }) as ContentBlock;
    const shot = (id: string): ContentBlock =>
      ({ type: "tool_result", tool_use_id: id, content: [text(`shot ${id}`), image()] }) as ContentBlock;
    const snap = (id: string): ContentBlock => ({
      type: "tool_use",
      id,
      name: "browser_screenshot",
      input: { page: id },
    });
    const ms: WireMessage[] = [
      { role: "user", content: [text("compare the two pages")] },
      { role: "assistant", content: [snap("s1")] },
      { role: "user", content: [shot("s1")] },
      { role: "assistant", content: [call("p")] },
      { role: "user", content: [result("p", 40_000)] },
      { role: "assistant", content: [snap("s2")] },
      { role: "user", content: [shot("s2")] }, // the step's new result: not seen yet
    ];
    const { messages } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(blocksIn(messages[6])).toEqual(blocksIn(ms[6]));
    const seen = blockAs(blocksIn(messages[2])[0], "tool_result").content;
    expect(JSON.stringify(seen)).not.toContain('"type":"image"');
    expect(JSON.stringify(seen)).toContain(
      'an image removed from this tool result to save context: conversation_read {\\"conversation_id\\":\\"conv_X\\",\\"message_id\\":\\"msg_2\\",\\"block\\":0} returns it with the result\'s text]',
    );
  });

  it("says where each copied block is stored, so a later pass over the copies can too", () => {
    const ms = monster(6, 9_000);
    const { messages, origins: copied } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    messages.forEach((m, i) =>
      blocksIn(m).forEach((b, j) =>
        expect(copied.get(b)).toEqual({ conversationId: "conv_X", messageId: `msg_${i}`, block: j }),
      ),
    );
  });
});
