// The lifecycle's boundaries, each pinned by the rule it states: a mutation review flipped each of
// these comparisons or constants (stubs, replay, refusals, the thinking guard, weights, the fold
// region) and no test noticed. Each case names the rule and fails if its line is changed.
import { describe, expect, it } from "vitest";
import { buildModelRequest, windowBudgetChars } from "../../core/replay";
import { messageChars, serverResultReadable } from "../../core/render";
import { replayableHistory } from "../../core/replay-rules";
import { defaultSettings } from "../../core/settings";
import { applyStubs, fitToWindow, isOversizedStub } from "../../core/stubs";
import { catalogEntry } from "../../core/models/lookup";
import { turnByTurnFoldLength } from "../../core/fold";
import { keepValidThinking } from "../../core/thinking-guard";
import type { ContentBlock, StoredMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
let seq = 0;
const msg = (
  role: "user" | "assistant",
  content: ContentBlock[],
  extra: Partial<StoredMessage> = {},
): StoredMessage => {
  seq++;
  return { id: `msg_${seq}`, seq, role, content, createdAt: "2026-01-01T00:00:00Z", ...extra };
};
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const use = (id: string): ContentBlock => ({ type: "tool_use", id, name: "file_read", input: { id } });
const result = (id: string, n: number): ContentBlock => ({
  type: "tool_result",
  tool_use_id: id,
  content: "x".repeat(n),
});
const S = { stubMinChars: 2000, stubAfterExchanges: 2, stubBatchChars: 4000 };

describe("the lifecycle at its boundaries", () => {
  it("a result beside the question that opens a fresh exchange is not stubbed", () => {
    seq = 0;
    const ms = [
      msg("user", [text("q1")]),
      msg("assistant", [use("a")]),
      msg("user", [result("a", 5000)]),
      msg("assistant", [use("b")]),
      // answers b and asks on: exchange 2 starts here (one of the last 2 exchanges)
      msg("user", [result("b", 5000), text("q2")]),
      msg("assistant", [text("ok")]),
      msg("user", [text("q3")]),
      msg("assistant", [text("ok")]),
    ];
    const out = applyStubs(ms, S, "conv_X");
    expect(out.stubbed).toBe(1);
    expect((out.messages[2].content[0] as { content: string }).content).toMatch(/^\[stale tool result/);
    expect((out.messages[4].content[0] as { content: string }).content).toBe("x".repeat(5000));
  });

  it("a result at exactly the fold's stubbedThrough seq stays stubbed", () => {
    seq = 100;
    const ms = [
      msg("user", [text("q1")]),
      msg("assistant", [use("a")]),
      msg("user", [result("a", 5000)]), // seq 103: a turn stopped after its results
      msg("user", [text("q2")]),
      msg("assistant", [text("ok")]),
    ];
    const out = applyStubs(ms, { ...S, stubbedThrough: 103 }, "conv_X");
    expect(out.stubbed).toBe(1);
    expect((out.messages[2].content[0] as { content: string }).content).toMatch(/^\[stale tool result/);
  });

  it("an earlier text of exactly OVERSIZED_MIN_CHARS (2,000) may be stubbed to fit", () => {
    seq = 0;
    const ms = [msg("user", [text("a".repeat(2000))]), msg("assistant", [text("ok")]), msg("user", [text("go")])];
    const out = fitToWindow(ms, { conversationId: "c", fixedChars: 0, budgetChars: 1500, promptNext: false });
    expect(out.stubbed).toBe(1);
    expect(isOversizedStub((out.messages[0].content[0] as { text: string }).text)).toBe(true);
  });

  it("the window budget leaves the output reserve out", () => {
    expect(windowBudgetChars({ contextWindowTokens: 200_000, outputReserveTokens: 8_192, charsPerToken: 1.5 })).toBe(
      287_712,
    );
    // A history that fits the whole window but not the window less the reserve gets its earlier text stubbed.
    seq = 0;
    const settings = {
      ...defaultSettings(SONNET),
      contextWindowTokens: 10_000,
      outputReserveTokens: 4_000,
      charsPerToken: 1,
    };
    const { request } = buildModelRequest({
      conversationId: "conv_X",
      settings,
      model: SONNET,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history: [msg("user", [text("a".repeat(8_000))]), msg("assistant", [text("ok")]), msg("user", [text("go")])],
    });
    expect(isOversizedStub(((request.messages[0].content as ContentBlock[])[0] as { text: string }).text)).toBe(true);
  });

  it("a refused reply a fallback model answered: only the refusal is left out once a later prompt follows", () => {
    seq = 0;
    const ms = [
      msg("user", [text("q1")]),
      msg("assistant", [text("")], { stopReason: "refusal" }),
      msg("assistant", [text("fallback answer")], { stopReason: "end_turn" }),
      msg("user", [text("q2")]),
    ];
    const kept = replayableHistory(ms).map((m) => m.seq);
    expect(kept).toEqual([1, 3, 4]);
  });

  const req = (max_tokens: number, budget: number, messages: unknown[]) =>
    ({
      model: "claude-haiku-4-5",
      max_tokens,
      thinking: { type: "enabled", budget_tokens: budget },
      system: [{ type: "text", text: "sys" }],
      tools: [],
      messages,
    }) as never;

  it("a budget equal to max_tokens is cut below it (the API requires budget_tokens < max_tokens)", () => {
    const out = keepValidThinking(req(4_000, 4_000, [{ role: "user", content: [text("hi")] }]), new Map()) as {
      thinking: { type: string; budget_tokens?: number };
    };
    expect(out.thinking).toEqual({ type: "enabled", budget_tokens: 3_999 });
  });

  it("a cut budget of exactly 1,024 (the minimum) keeps thinking on", () => {
    const out = keepValidThinking(req(1_025, 4_000, [{ role: "user", content: [text("hi")] }]), new Map()) as {
      thinking: { type: string; budget_tokens?: number };
    };
    expect(out.thinking).toEqual({ type: "enabled", budget_tokens: 1_024 });
  });

  it("a new turn's first call keeps manual thinking though the reply before it opened with text", () => {
    const messages = [
      { role: "user", content: [text("q1")] },
      { role: "assistant", content: [text("a1")] },
      { role: "user", content: [text("q2")] },
    ];
    const out = keepValidThinking(req(8_000, 2_000, messages), new Map()) as { thinking: { type: string } };
    expect(out.thinking.type).toBe("enabled");
  });

  it("a thinking block weighs its signature too (display omitted: the text is empty)", () => {
    const m = { content: [{ type: "thinking", thinking: "", signature: "s".repeat(3_000) }] as ContentBlock[] };
    expect(messageChars(m)).toBe(3_000);
  });

  it("a fetched PDF weighs 1.5 chars per token the API counts for it (never lighter than any model counts)", () => {
    const data = "A".repeat(40_000); // 30,000 bytes -> 7,500 tokens -> 11,250 chars
    const block = {
      type: "web_fetch_tool_result",
      tool_use_id: "srvtoolu_01",
      content: {
        type: "web_fetch_result",
        url: "https://example.com/a.pdf",
        retrieved_at: "2026-12-01T00:00:00Z",
        content: { type: "document", source: { type: "base64", media_type: "application/pdf", data }, title: null },
      },
    } as unknown as ContentBlock;
    expect(messageChars({ content: [block] }) - serverResultReadable(block as never).length).toBe(11_250);
  });

  it("an odd tail: the fold region ends at the first turn whose part before the kept tail passes the threshold", () => {
    seq = 0;
    const region = Array.from({ length: 10 }, (_, i) => msg(i % 2 ? "assistant" : "user", [text("m".repeat(100))]));
    // tail 3: at the turn end before index 6 the mark is 3 -> back to 2 (200 chars, not past 250); before index 8, 4 (400).
    expect(turnByTurnFoldLength(region, 3, 250)).toBe(8);
  });
});
