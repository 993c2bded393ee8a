// The trigger's provider calibration carried from the conversation's last call into the next
// turn's first: added to growth, scaled down when the request shrank (a fold, a stub batch), and
// never taken from another model's count.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { carriedCount, TurnCompactor } from "../../agent/turn-compaction";
import { effectiveTokens } from "../../core/compactor";
import { catalogEntry } from "../../core/models/lookup";
import type { ModelRequest, StoredMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const BUDGET = {
  contextWindowTokens: 20_000,
  outputReserveTokens: 5_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
const request = (chars: number): ModelRequest => ({
  model: SONNET.id,
  max_tokens: 1_000,
  system: [{ type: "text", text: "s" }],
  tools: [],
  messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(chars - 3) }] }],
});
const history = (model: string): StoredMessage[] => [
  { id: "m1", seq: 1, role: "user", content: [{ type: "text", text: "hi" }], createdAt: "" },
  { id: "m2", seq: 2, role: "assistant", content: [{ type: "text", text: "yo" }], createdAt: "", model },
];
const compactor = () => new TurnCompactor(BUDGET, {} as Anthropic, SONNET, () => () => undefined);

describe("the calibration carried across turns", () => {
  it("scales the provider's count down with the estimate when the request shrank", () => {
    // Grown since the count: the count plus the growth (as within a turn).
    expect(effectiveTokens(12_000, { reportedTokens: 15_000, estimateAtReport: 11_000 })).toBe(16_000);
    // Halved since the count (a fold): the count halved, never the stale figure whole.
    expect(effectiveTokens(5_000, { reportedTokens: 13_000, estimateAtReport: 10_000 })).toBe(6_500);
    // Never under the estimate itself.
    expect(effectiveTokens(5_000, { reportedTokens: 4_000, estimateAtReport: 10_000 })).toBe(5_000);
  });

  it("seeds the first call of a turn with the last call's count, at this budget's chars per token", () => {
    const c = compactor();
    const next = request(14_000); // ~9,334 tokens by the estimate: under the 11,250 trigger
    expect(c.due(next)).toBe(false);
    // The last call was 13,500 chars, counted at 13,358 tokens by the provider.
    c.seeded(carriedCount({ chars: 13_500, reportedTokens: 13_358 }, history(SONNET.id), SONNET));
    expect(c.effective(next)).toBe(13_358 + (c.estimate(next) - 9_000));
    expect(c.due(next)).toBe(true);
    // A fold took most of it away since: the count shrinks with it, and nothing is forced.
    expect(c.due(request(4_000))).toBe(false);
  });

  it("carries nothing from a call with no count, or counted by another model", () => {
    const last = { chars: 13_500, reportedTokens: 13_358 };
    expect(carriedCount(last, history(SONNET.id), SONNET)).toEqual({ reportedTokens: 13_358, chars: 13_500 });
    expect(carriedCount(undefined, history(SONNET.id), SONNET)).toBeNull();
    expect(carriedCount({ ...last, reportedTokens: null }, history(SONNET.id), SONNET)).toBeNull();
    expect(carriedCount(last, history("claude-opus-4-1"), SONNET)).toBeNull();
    expect(carriedCount(last, [], SONNET)).toBeNull();
    const c = compactor().seeded(null);
    expect(c.effective(request(14_000))).toBe(c.estimate(request(14_000)));
  });
});
