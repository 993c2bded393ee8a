// The agent loop's context-full guard at its edge, driven through runAgentTurn with a scripted
// provider: a max_tokens stop continues unless the input is within 512 tokens of the window.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { CONTEXT_FULL_MARGIN_TOKENS, runAgentTurn } from "../../agent/turn-loop";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import type { ModelRequest, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

const WINDOW = 10_000;

/** A provider whose replies are scripted: each call takes the next (stop_reason, input tokens). */
function scriptedClient(replies: { stop: "max_tokens" | "end_turn"; inputTokens: number }[]) {
  let calls = 0;
  const client = {
    messages: {
      stream() {
        const r = replies[calls++];
        if (!r) throw new Error("more model calls than scripted");
        const message = {
          id: `msg_${calls}`,
          type: "message",
          role: "assistant",
          model: "scripted",
          content: [{ type: "text", text: `part ${calls}` }],
          stop_reason: r.stop,
          stop_sequence: null,
          usage: {
            input_tokens: r.inputTokens,
            output_tokens: 5,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        };
        return { on: () => undefined, finalMessage: async () => message };
      },
    },
  };
  return { client: client as unknown as Anthropic, calls: () => calls };
}

async function turnWith(replies: Parameters<typeof scriptedClient>[0]) {
  const { client, calls } = scriptedClient(replies);
  const saved: StoredMessage[] = [];
  const outcome = await runAgentTurn(
    {
      turnId: "turn_1",
      client,
      registry: new ToolRegistry(),
      toolContext: {} as ToolContext,
      maxIterations: 10,
      contextWindowTokens: WINDOW,
      model: SONNET,
      knownThinking: () => new Map(),
      buildRequest: (): ModelRequest => ({
        model: "scripted",
        max_tokens: 100,
        system: [],
        tools: [],
        messages: [{ role: "user", content: "go" }],
      }),
      persist: persistInto(saved),
      emit: () => undefined,
    },
    [{ type: "text", text: "write on" }],
  );
  return { outcome, calls: calls(), assistant: saved.filter((m) => m.role === "assistant").length };
}

describe("the context-full guard", () => {
  it("ends the turn when the input is exactly 512 tokens short of the window", async () => {
    const r = await turnWith([{ stop: "max_tokens", inputTokens: WINDOW - CONTEXT_FULL_MARGIN_TOKENS }]);
    expect(CONTEXT_FULL_MARGIN_TOKENS).toBe(512);
    expect(r.outcome.stopReason).toBe("context_full");
    expect(r.calls).toBe(1);
    expect(r.assistant).toBe(1); // what it had is kept
  });

  it("ends it too when the input is closer still (511 short)", async () => {
    const r = await turnWith([{ stop: "max_tokens", inputTokens: WINDOW - CONTEXT_FULL_MARGIN_TOKENS + 1 }]);
    expect(r.outcome.stopReason).toBe("context_full");
    expect(r.calls).toBe(1);
  });

  it("continues the cut-off reply when one more token of room is left (513 short)", async () => {
    const r = await turnWith([
      { stop: "max_tokens", inputTokens: WINDOW - CONTEXT_FULL_MARGIN_TOKENS - 1 },
      { stop: "end_turn", inputTokens: WINDOW - CONTEXT_FULL_MARGIN_TOKENS - 1 + 5 },
    ]);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.calls).toBe(2);
    expect(r.assistant).toBe(2);
  });
});
