// The fold's request fits the model's window (excerpts, the previous summary, the prompt and the
// reply's max_tokens together), and the fallback summary folds the whole previous summary in.
import { describe, expect, it } from "vitest";
import { buildFoldRequest, fallbackFoldSummary, FOLD_MIN_BUDGET_CHARS, foldBudgetChars } from "../../core/fold";
import { catalogEntry } from "../../core/models/lookup";
import type { ContentBlock, StoredMessage } from "../../core/types";

// Thinking it cannot turn off: its fold calls ask for the most max_tokens (the cap plus thinking room).
const OPUS = catalogEntry("claude-opus-5-5")!;

/** The request's input, estimated as the settings estimate excerpts: chars over charsPerToken. */
function inputChars(request: ReturnType<typeof buildFoldRequest>): number {
  const system = request.system.map((b) => b.text).join("");
  const text = request.messages
    .flatMap((m): ContentBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content))
    .map((b) => (b.type === "text" ? b.text : ""))
    .join("");
  return system.length + text.length;
}

describe("foldBudgetChars", () => {
  const cases = [
    { contextWindowTokens: 64_000, summaryMaxChars: 20_000, charsPerToken: 1.5 },
    { contextWindowTokens: 50_000, summaryMaxChars: 12_000, charsPerToken: 1.15 },
    { contextWindowTokens: 100_000, summaryMaxChars: 30_000, charsPerToken: 3 },
    { contextWindowTokens: 200_000, summaryMaxChars: 6_000, charsPerToken: 1.5 },
  ];
  for (const settings of cases)
    it(`leaves room for the previous summary and max_tokens: ${JSON.stringify(settings)}`, () => {
      const budget = foldBudgetChars(settings);
      expect(budget).toBeGreaterThan(FOLD_MIN_BUDGET_CHARS);
      const request = buildFoldRequest({
        model: OPUS,
        previousSummary: "s".repeat(settings.summaryMaxChars),
        excerpts: ["e".repeat(budget)],
        maxChars: settings.summaryMaxChars,
      });
      const inputTokens = Math.ceil(inputChars(request) / settings.charsPerToken);
      expect(inputTokens + request.max_tokens).toBeLessThanOrEqual(settings.contextWindowTokens);
    });

  it("keeps the whole prompt budget where the window is large", () => {
    expect(foldBudgetChars({ contextWindowTokens: 1_000_000, summaryMaxChars: 6_000, charsPerToken: 1.5 })).toBe(
      160_000,
    );
  });
});

const prompt = (seq: number, text: string): StoredMessage => ({
  id: `msg_${seq}`,
  seq,
  role: seq % 2 ? "user" : "assistant",
  content: [{ type: "text", text }],
  createdAt: "2026-01-01T00:00:00Z",
});
const region = (n: number, words = "topic") =>
  Array.from({ length: n }, (_, i) => prompt(i + 1, i % 2 ? `answer ${i + 1}` : `${words} ${i + 1}`));
const facts = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `Fact ${String(i + 1).padStart(3, "0")}: the team agreed on item ${i + 1} after the review.`,
  ).join("\n");

describe("fallbackFoldSummary", () => {
  it("folds the whole previous summary in when the cap has room for it", () => {
    const previous = facts(100);
    expect(previous.length).toBeGreaterThan(4_000);
    const summary = fallbackFoldSummary(previous, region(20), 6_000);
    expect(summary.length).toBeLessThanOrEqual(6_000);
    expect(summary).toContain(previous);
    for (let i = 1; i < 20; i += 2) expect(summary).toContain(`- seq ${i}: topic ${i}`);
  });

  it("trims the prompt list before the previous summary", () => {
    const previous = facts(100);
    const long = "a long prompt about the migration plan and its many steps ".repeat(3);
    const summary = fallbackFoldSummary(previous, region(200, long), 6_000);
    expect(summary.length).toBeLessThanOrEqual(6_000);
    expect(summary).toContain(previous);
    expect(summary).toContain("- seq 1: a long prompt");
    expect(summary).not.toContain("- seq 199:");
    // Trimmed only as far as the cap forces: little of it is left unused.
    expect(summary.length).toBeGreaterThan(6_000 - 200);
  });

  it("trims the previous summary only as far as the cap forces", () => {
    const previous = facts(140).slice(0, 5_990);
    const summary = fallbackFoldSummary(previous, region(10), 6_000);
    expect(summary.length).toBeLessThanOrEqual(6_000);
    expect(summary).toContain(previous.slice(0, 5_000));
    expect(summary.length).toBeGreaterThan(6_000 - 300);
  });
});
