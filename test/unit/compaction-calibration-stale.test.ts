// The count carried from the conversation's last call into the next turn's first holds only for a
// request that starts with the content it was measured over: after a stub batch replaced stale
// image results (or a fold replaced what the estimate barely counts), the turn starts uncalibrated
// rather than carrying image tokens the request no longer holds and forcing a needless pass.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { carriedCount, TurnCompactor } from "../../agent/turn-compaction";
import { contentFingerprint, requestChars } from "../../core/compactor";
import { catalogEntry } from "../../core/models/lookup";
import { stubText } from "../../core/stubs";
import type { ModelRequest, StoredMessage, WireMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const BUDGET = {
  contextWindowTokens: 200_000,
  outputReserveTokens: 16_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
const STEPS = 80;
/** A 1092×1092 image: (w·h)/750 tokens by the provider, its short label by the estimate. */
const IMAGE_TOKENS = Math.round((1092 * 1092) / 750);
const IMAGE_DATA = "A".repeat(4_000);
const history: StoredMessage[] = [
  { id: "m1", seq: 1, role: "user", content: [{ type: "text", text: "look at these" }], createdAt: "" },
  { id: "m2", seq: 2, role: "assistant", content: [{ type: "text", text: "done" }], createdAt: "", model: SONNET.id },
];

/** The prompt, then STEPS screenshot calls; the first `stubbed` results replaced by their stubs. */
function steps(stubbed: number): WireMessage[] {
  const out: WireMessage[] = [{ role: "user", content: [{ type: "text", text: "look at these" }] }];
  for (let i = 0; i < STEPS; i++) {
    const call = { type: "tool_use" as const, id: `t${i}`, name: "screenshot", input: { page: i } };
    out.push({ role: "assistant", content: [call] });
    const text = `${i}`.padEnd(100, ".");
    const message: StoredMessage = { id: `r${i}`, seq: 10 + i, role: "user", content: [], createdAt: "" };
    const content =
      i < stubbed
        ? stubText({ conversationId: "c1", message, blockIndex: 0, chars: 100, call, images: 1 })
        : [
            { type: "text" as const, text },
            { type: "image" as const, source: { type: "base64" as const, media_type: "image/png", data: IMAGE_DATA } },
          ];
    out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content }] });
  }
  return out;
}
const request = (messages: WireMessage[]): ModelRequest => ({
  model: SONNET.id,
  max_tokens: 16_000,
  system: [{ type: "text", text: "system" }],
  tools: [],
  messages,
});
const compactor = () => new TurnCompactor(BUDGET, {} as Anthropic, SONNET, () => () => undefined);
const next = (messages: WireMessage[]): WireMessage[] => [
  ...messages,
  { role: "assistant", content: [{ type: "text", text: "done" }] },
  { role: "user", content: [{ type: "text", text: "and now? ".repeat(700) }] },
];

describe("the carried calibration after a stub batch", () => {
  const before = request(steps(0));
  const estimateBefore = compactor().estimate(before);
  // What the provider counted for the last call: its text, and every image in full.
  const reported = estimateBefore + STEPS * IMAGE_TOKENS;
  const last = {
    chars: requestChars(before),
    reportedTokens: reported,
    messages: before.messages.length,
    prefix: contentFingerprint(before.messages),
  };

  it("is not carried to a request whose images were stubbed since", () => {
    expect(reported).toBeLessThan(138_000); // the last call was under the trigger
    const after = request(next(steps(74)));
    // What the provider will count: the estimate (which counts the stubs' text) and 6 images left.
    const real = compactor().estimate(after) + 6 * IMAGE_TOKENS;
    expect(real).toBeLessThan(40_000);
    const c = compactor();
    expect(c.due(after)).toBe(false);
    c.seeded(carriedCount(last, history, SONNET));
    expect(c.effective(after)).toBe(c.estimate(after));
    expect(c.due(after)).toBe(false);
  });

  it("is carried to a request that starts with what it was measured over", () => {
    const after = request(next(steps(0)));
    const c = compactor().seeded(carriedCount(last, history, SONNET));
    expect(c.effective(after)).toBe(reported + (c.estimate(after) - estimateBefore));
    expect(c.due(after)).toBe(true);
    // The breakpoints each build places change nothing the count was measured over.
    const marked = next(steps(0)).map((m, i) =>
      i === STEPS * 2 && typeof m.content !== "string"
        ? { ...m, content: m.content.map((b) => ({ ...b, cache_control: { type: "ephemeral" as const } })) }
        : m,
    );
    expect(
      compactor()
        .seeded(carriedCount(last, history, SONNET))
        .due(request(marked)),
    ).toBe(true);
  });

  it("carries nothing from a snapshot that does not record what it was measured over", () => {
    expect(carriedCount({ ...last, prefix: null }, history, SONNET)).toBeNull();
  });
});
