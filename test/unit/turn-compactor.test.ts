// The in-turn compactor keeps every pass standing in for what it replaced, for the rest of the
// turn: a later step's fresh build (the stored originals) is recognised as the same prefix, so a
// second pass is not thrown away at the next step and asked for again.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { TurnCompactor } from "../../agent/turn-compaction";
import { catalogEntry } from "../../core/models/lookup";
import type { ContentBlock, ModelRequest, StoredMessage, WireMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const big = (n: number) => `row ${n} `.padEnd(20_000, "x");

/** The request a turn builds after `steps` file reads: the stored originals, a breakpoint on the last message. */
function built(steps: number): ModelRequest {
  const messages: WireMessage[] = [{ role: "user", content: [{ type: "text", text: "read all the files" }] }];
  for (let i = 0; i < steps; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "file_read", input: { n: i } }],
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: big(i) }] });
  }
  const last = messages.at(-1)!.content as ContentBlock[];
  last[last.length - 1] = { ...last[last.length - 1], cache_control: { type: "ephemeral" } } as ContentBlock;
  return {
    model: "claude-sonnet-5-5",
    max_tokens: 1_000,
    system: [{ type: "text", text: "sys" }],
    tools: [],
    messages,
  };
}

const turn: StoredMessage[] = [
  {
    id: "msg_1",
    seq: 1,
    role: "user",
    createdAt: "2026-01-01T00:00:00Z",
    content: [{ type: "text", text: "read all the files" }],
  },
];
const BUDGET = {
  contextWindowTokens: 60_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
/** A client whose every call is a turn-state answer of `inputTokens`; `onCall` sees the model asked. */
const stateClient = (onCall: (model: string) => unknown, inputTokens: number) =>
  ({
    messages: {
      create: async (params: { model: string }) => {
        onCall(params.model);
        return {
          content: [{ type: "text", text: "TASK:\n- read\nREMAINING:\n- rest" }],
          usage: { input_tokens: inputTokens, output_tokens: 10 },
        };
      },
    },
  }) as unknown as Anthropic;
const breakpoints = (r: ModelRequest) => JSON.stringify(r.messages).split('"cache_control"').length - 1;

describe("the in-turn compactor", () => {
  it("keeps a second pass standing in at the next step, with no state call and one breakpoint of its own", async () => {
    let stateCalls = 0;
    const client = stateClient(() => stateCalls++, 10);
    const c = new TurnCompactor(BUDGET, client, SONNET, () => () => undefined);
    let r = c.apply(built(4));
    expect(c.due(r)).toBe(true);
    await c.compact(r, turn);
    r = c.apply(built(6));
    expect(c.active).toBe(true);
    expect(c.due(r)).toBe(true);
    const second = await c.compact(r, turn);
    expect(stateCalls).toBe(2);
    // The next step: its build holds the originals again; the second pass stands in for them.
    r = c.apply(built(7));
    expect(c.active).toBe(true);
    const secondChars = JSON.stringify(second.request.messages).length;
    expect(JSON.stringify(r.messages.slice(0, second.request.messages.length)).length).toBeLessThanOrEqual(secondChars);
    // Only the new last message carries a breakpoint: the passes do not pile theirs up.
    expect(breakpoints(r)).toBe(1);
    expect(stateCalls).toBe(2);
  });

  it("asks the model the turn asks now: after a refusal fallback, its state call goes to the fallback", async () => {
    const asked: string[] = [];
    const client = stateClient((model) => asked.push(model), 1_000);
    let active = SONNET;
    const c = new TurnCompactor(
      BUDGET,
      client,
      () => active,
      () => () => undefined,
    );
    await c.compact(c.apply(built(4)), turn);
    active = catalogEntry("claude-opus-5-5")!;
    const second = await c.compact(c.apply(built(6)), turn);
    expect(asked).toEqual(["claude-sonnet-5-5", "claude-opus-5-5"]);
    // Priced at the model it went to.
    expect(second.usage.cost_usd).toBeCloseTo(1_000 * 4e-6 + 10 * 20e-6, 9);
  });
});
