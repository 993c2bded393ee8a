// The in-turn compactor's boundaries: a standing pass dropped when the build's prefix moved under
// it, replies bounded by the reserve an overflow taught, the chars per token an overflow observed,
// and a reply cut off at model_context_window_exceeded forcing a pass even with input well below
// the window.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { TurnCompactor } from "../../agent/turn-compaction";
import { runAgentTurn } from "../../agent/turn-loop";
import type { TurnEvent } from "../../core/events";
import { requestChars } from "../../core/compactor";
import { catalogEntry } from "../../core/models/lookup";
import { toWireMessages } from "../../core/replay";
import { knownThinking } from "../../core/thinking-guard";
import type { ContentBlock, ModelRequest, StoredMessage, WireMessage } from "../../core/types";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const TASK = "read all the files";
const turnMessages: StoredMessage[] = [
  { id: "msg_1", seq: 1, role: "user", createdAt: "2026-01-01T00:00:00Z", content: [{ type: "text", text: TASK }] },
];
const noOrigin = () => () => undefined;

/** A task, then one file_read pair per size (`tag` tells two builds of the same sizes apart). */
function request(sizes: readonly number[], tag = "file"): ModelRequest {
  const messages: WireMessage[] = [{ role: "user", content: [{ type: "text", text: TASK }] }];
  sizes.forEach((size, i) => {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "file_read", input: { n: i } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `${tag} ${i} `.padEnd(size, "x") }],
    });
  });
  return { model: SONNET.id, max_tokens: 1_000, system: [{ type: "text", text: "sys" }], tools: [], messages };
}

/** A state client answering a short note. */
const stateClient = () =>
  ({
    messages: {
      create: async () => ({
        content: [{ type: "text", text: "TASK:\n- read\nPROGRESS:\n- 4 read\nREMAINING:\n- none" }],
        usage: { input_tokens: 500, output_tokens: 20 },
      }),
    },
  }) as unknown as Anthropic;

describe("a standing pass whose prefix moved under the turn", () => {
  it("is dropped: the new build goes out unchanged and no pass stands in any more", async () => {
    const budget = {
      contextWindowTokens: 60_000,
      outputReserveTokens: 2_000,
      compactTriggerRatio: 0.75,
      compactTargetRatio: 0.5,
      charsPerToken: 1.5,
    };
    const c = new TurnCompactor(budget, stateClient(), SONNET, noOrigin);
    const before = c.apply(request([22_000, 22_000, 22_000, 22_000]));
    await c.compact(before, turnMessages);
    expect(c.active).toBe(true);
    // The same build again: the pass stands in for it.
    expect(c.apply(request([22_000, 22_000, 22_000, 22_000])).messages).not.toEqual(before.messages);
    // A fold landed: the first messages of the next build are not the ones the pass stands in for.
    const moved = request([22_000, 22_000, 22_000, 22_000, 100], "folded");
    const out = c.apply(moved);
    expect(out.messages).toEqual(moved.messages);
    expect(c.active).toBe(false);
  });
});

describe("what an overflow 400 teaches the compactor", () => {
  const budget = {
    contextWindowTokens: 100_000,
    outputReserveTokens: 8_000,
    compactTriggerRatio: 0.75,
    compactTargetRatio: 0.5,
    charsPerToken: 4,
  };

  it("bounds every later request's max_tokens by the reserve of the window it learnt", () => {
    const c = new TurnCompactor(budget, stateClient(), SONNET, noOrigin);
    const req = { ...request([1_000]), max_tokens: 8_000 };
    // Untaught, a reply of 8,000 tokens fits the 8,000 reserve.
    expect(c.apply(req).max_tokens).toBe(8_000);
    // The real window is 8,000 tokens: the reserve becomes a quarter of it.
    c.learnFromOverflow(req, 9_000, 8_000);
    expect(c.apply(req).max_tokens).toBe(2_000);
  });

  it("takes the provider's chars per token when it counted more tokens than the estimate", () => {
    const c = new TurnCompactor(budget, stateClient(), SONNET, noOrigin);
    const base = request([1_000]);
    // A request of exactly 40,000 chars.
    const req = request([1_000 + 40_000 - requestChars(base)]);
    expect(requestChars(req)).toBe(40_000);
    expect(c.estimate(req)).toBe(10_000);
    c.learnFromOverflow(req, 20_000, 200_000);
    expect(c.estimate(req)).toBe(20_000);
  });
});

describe("a reply cut off at model_context_window_exceeded", () => {
  it("forces a compaction before the next call, with the input well below the window", async () => {
    const replies: { content: ContentBlock[]; stop: string }[] = [
      { content: [{ type: "text", text: "Part one" }], stop: "model_context_window_exceeded" },
      { content: [{ type: "text", text: " and part two." }], stop: "end_turn" },
    ];
    const requests: ModelRequest[] = [];
    const events: TurnEvent[] = [];
    /** How many compaction_started events each call came after. */
    const startedAtCall: number[] = [];
    const client = {
      messages: {
        stream(params: ModelRequest) {
          requests.push(structuredClone(params));
          startedAtCall.push(events.filter((e) => e.type === "compaction_started").length);
          const r = replies[requests.length - 1];
          if (!r) throw new Error("more model calls than scripted");
          const message = {
            id: `msg_${requests.length}`,
            type: "message",
            role: "assistant",
            model: params.model,
            content: r.content,
            stop_reason: r.stop,
            stop_details: null,
            stop_sequence: null,
            // 100 input tokens: far below the window less CONTEXT_FULL_MARGIN_TOKENS.
            usage: { input_tokens: 100, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          };
          return { on: () => undefined, finalMessage: async () => message, currentMessage: message };
        },
      },
    } as unknown as Anthropic;
    const compactor = new TurnCompactor(
      {
        contextWindowTokens: SONNET.contextWindow,
        outputReserveTokens: 8_000,
        compactTriggerRatio: 0.75,
        compactTargetRatio: 0.5,
        charsPerToken: 4,
      },
      stateClient(),
      SONNET,
      noOrigin,
    );
    const saved: StoredMessage[] = [];
    const outcome = await runAgentTurn(
      {
        turnId: "turn_1",
        client,
        registry: new ToolRegistry(),
        toolContext: { activeTools: [] } as unknown as ToolContext,
        maxIterations: 10,
        contextWindowTokens: SONNET.contextWindow,
        model: SONNET,
        compactor,
        buildRequest: (): ModelRequest => ({
          model: SONNET.id,
          max_tokens: 1_000,
          system: [],
          tools: [],
          messages: toWireMessages(saved),
        }),
        knownThinking: () => knownThinking(saved),
        persist: persistInto(saved),
        emit: (e) => events.push(e),
        retryDelayMs: () => 1,
      },
      [{ type: "text", text: "the prompt" }],
    );
    expect(outcome.stopReason).toBe("end_turn");
    expect(requests).toHaveLength(2);
    // The small request is not due by itself: only the stop forces the pass.
    expect(compactor.due(requests[0])).toBe(false);
    const started = events.filter((e) => e.type === "compaction_started");
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ type: "compaction_started", forced: true });
    // It ran between the first call and the second.
    expect(startedAtCall).toEqual([0, 1]);
  });
});
