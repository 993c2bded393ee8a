// A compaction pass must never ship a <turn_state> note its cuts do not pay for: a pass that would
// make the next request larger (and leave it due) changes nothing, makes no state call, and counts
// as fruitless, so the turn does not ask again for a pass that frees nothing.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { TurnCompactor } from "../../agent/turn-compaction";
import { catalogEntry } from "../../core/models/lookup";
import type { ModelRequest, StoredMessage, WireMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const BUDGET = {
  contextWindowTokens: 60_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
const TASK = "read all the files";
const turn: StoredMessage[] = [
  { id: "msg_1", seq: 1, role: "user", createdAt: "2026-01-01T00:00:00Z", content: [{ type: "text", text: TASK }] },
];

/** A task, then one file_read pair per size: only the first (small) result is outside the protected last 3. */
function request(sizes: readonly number[]): ModelRequest {
  const messages: WireMessage[] = [{ role: "user", content: [{ type: "text", text: TASK }] }];
  sizes.forEach((size, i) => {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "file_read", input: { n: i } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `file ${i} `.padEnd(size, "x") }],
    });
  });
  return { model: SONNET.id, max_tokens: 1_000, system: [{ type: "text", text: "sys" }], tools: [], messages };
}

/** A state client answering a short note; counts its calls. */
function stateClient() {
  const calls = { n: 0 };
  const client = {
    messages: {
      create: async () => {
        calls.n++;
        return {
          content: [{ type: "text", text: "TASK:\n- read\nPROGRESS:\n- 4 read\nREMAINING:\n- none" }],
          usage: { input_tokens: 500, output_tokens: 20 },
        };
      },
    },
  };
  return { client: client as unknown as Anthropic, calls };
}

describe("a compaction pass whose cuts do not pay for its note", () => {
  it("leaves the request as it was, makes no state call and counts the pass fruitless", async () => {
    const { client, calls } = stateClient();
    const c = new TurnCompactor(BUDGET, client, SONNET, () => () => undefined);
    const before = c.apply(request([700, 22_000, 22_000, 22_000]));
    expect(c.due(before)).toBe(true);
    const out = await c.compact(before, turn);
    // Never larger than before: the 100 chars cut from the small result do not pay for a note.
    expect(out.report.tokensAfter).toBeLessThanOrEqual(out.report.tokensBefore);
    expect(JSON.stringify(out.request.messages)).not.toContain("<turn_state>");
    expect(out.request.messages).toEqual(before.messages);
    expect(out.report.tokensSaved).toBe(0);
    expect(calls.n).toBe(0);
    expect(out.usage.input_tokens).toBe(0);
    expect(c.fruitless).toBe(true);
    expect(c.active).toBe(false);
    // Nothing stands in for the request at the next step either.
    expect(c.apply(before).messages).toEqual(before.messages);
  });

  it("still ships a pass that saves more than its note, smaller than before", async () => {
    const { client, calls } = stateClient();
    const c = new TurnCompactor(BUDGET, client, SONNET, () => () => undefined);
    const before = c.apply(request([22_000, 22_000, 22_000, 22_000]));
    const out = await c.compact(before, turn);
    expect(calls.n).toBe(1);
    expect(JSON.stringify(out.request.messages)).toContain("<turn_state>");
    expect(out.report.tokensAfter).toBeLessThan(out.report.tokensBefore);
    expect(c.fruitless).toBe(false);
    expect(c.active).toBe(true);
  });
});
