// A Stop during an in-turn compaction, through runAgentTurn with a scripted provider: the state
// call under way is cancelled (it gets the turn's signal), none is made once the turn was stopped,
// no model call follows (after a due pass or the forced pass after an overflow), and a retry's
// backoff ends at the Stop. The scripted calls never finish on their own while a signal can end
// them, so a call that ignored the Stop would be seen, never waited out.
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { blockOrigins, TurnCompactor } from "../../agent/turn-compaction";
import { runAgentTurn, type TurnDeps } from "../../agent/turn-loop";
import type { TurnEvent } from "../../core/events";
import { catalogEntry } from "../../core/models/lookup";
import { toWireMessages } from "../../core/replay";
import { knownThinking } from "../../core/thinking-guard";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const BUDGET = {
  contextWindowTokens: 60_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
/** Large enough that one result makes the next request due, and its cut pays for the note. */
const BIG = 66_000;

type Step = { tool: true } | { done: true } | { error: "overflow" | "overloaded" };

const usage = () => ({
  input_tokens: 100,
  output_tokens: 5,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

function apiError(kind: "overflow" | "overloaded"): Error {
  if (kind === "overflow") {
    const message = "prompt is too long: 50000 tokens > 40000 maximum";
    const body = { type: "error", error: { type: "invalid_request_error", message } };
    return new Anthropic.APIError(400, body, message, new Headers());
  }
  const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
  return new Anthropic.APIError(undefined, body, JSON.stringify(body), new Headers(), "overloaded_error");
}

/** The turn's provider: streams follow `script` (an aborted signal fails them, as the SDK does). */
function provider(script: Step[], controller: AbortController) {
  const streams: ModelRequest[] = [];
  const stateOptions: Array<{ signal?: AbortSignal } | undefined> = [];
  const client = {
    messages: {
      stream(params: ModelRequest, options?: { signal?: AbortSignal }) {
        streams.push(params);
        const step = script[streams.length - 1];
        if (!step) throw new Error("more model calls than scripted");
        const fail = (e: unknown) => ({ on: () => undefined, finalMessage: async () => Promise.reject(e) });
        if (options?.signal?.aborted) return fail(new Anthropic.APIUserAbortError());
        if ("error" in step) return fail(apiError(step.error));
        const message = {
          id: `msg_${streams.length}`,
          type: "message",
          role: "assistant",
          model: params.model,
          content:
            "tool" in step
              ? [{ type: "tool_use", id: `toolu_${streams.length}`, name: "read", input: {} }]
              : [{ type: "text", text: "done" }],
          stop_reason: "tool" in step ? "tool_use" : "end_turn",
          stop_sequence: null,
          usage: usage(),
        };
        return { on: () => undefined, finalMessage: async () => message, currentMessage: message };
      },
      /**
       * The state call: a Stop arrives while it runs. With a signal it fails at once, as the SDK's
       * does; without one it runs to completion (it only finishes once the turn was stopped).
       */
      create(_params: unknown, options?: { signal?: AbortSignal }) {
        stateOptions.push(options);
        setTimeout(() => controller.abort(), 0);
        return new Promise((resolve, reject) => {
          const signal = options?.signal;
          if (signal) {
            const stop = () => reject(new Anthropic.APIUserAbortError());
            if (signal.aborted) stop();
            else signal.addEventListener("abort", stop, { once: true });
            return;
          }
          const finish = () =>
            resolve({
              content: [{ type: "text", text: "TASK:\n- read\nPROGRESS:\n- 1 read\nREMAINING:\n- none" }],
              usage: { input_tokens: 500, output_tokens: 20 },
            });
          if (controller.signal.aborted) finish();
          else controller.signal.addEventListener("abort", finish, { once: true });
        });
      },
    },
  };
  return { client: client as unknown as Anthropic, streams, stateOptions };
}

async function stoppedTurn(
  script: Step[],
  opts: { budget?: typeof BUDGET; resultChars?: number; extra?: (c: AbortController) => Partial<TurnDeps> } = {},
) {
  const controller = new AbortController();
  const { client, streams, stateOptions } = provider(script, controller);
  const saved: StoredMessage[] = [];
  const events: TurnEvent[] = [];
  const registry = new ToolRegistry().register({
    name: "read",
    core: true,
    capability: "read",
    description: "read",
    input: z.strictObject({}),
    run: async () => ({ content: "r".repeat(opts.resultChars ?? BIG) }),
  });
  const budget = opts.budget ?? BUDGET;
  const outcome = await runAgentTurn(
    {
      turnId: "turn_1",
      client,
      registry,
      toolContext: { activeTools: [] } as unknown as ToolContext,
      maxIterations: 10,
      contextWindowTokens: budget.contextWindowTokens,
      model: SONNET,
      compactor: new TurnCompactor(budget, client, SONNET, () => blockOrigins("conv_S", saved)),
      buildRequest: (): ModelRequest => ({
        model: SONNET.id,
        max_tokens: 1_000,
        system: [{ type: "text", text: "sys" }],
        tools: [],
        messages: toWireMessages(saved),
      }),
      knownThinking: () => knownThinking(saved),
      persist: persistInto(saved),
      emit: (e) => events.push(e),
      retryDelayMs: () => 1,
      signal: controller.signal,
      ...opts.extra?.(controller),
    },
    [{ type: "text", text: "read the file" } as ContentBlock],
  );
  return { outcome, streams, stateOptions, events, controller };
}

describe("a Stop during an in-turn compaction", () => {
  it("cancels the state call under way and makes no model call after it", async () => {
    const r = await stoppedTurn([{ tool: true }, { done: true }]);
    expect(r.stateOptions).toHaveLength(1);
    expect(r.stateOptions[0]?.signal).toBe(r.controller.signal);
    expect(r.outcome.stopReason).toBe("interrupted");
    // Only the call before the compaction was made; the cancelled state call billed nothing.
    expect(r.streams).toHaveLength(1);
    expect(r.outcome.usage.input_tokens).toBe(100);
    expect(r.events.find((e) => e.type === "compaction")).toMatchObject({ summarized: "fallback" });
  });

  it("makes no state call once the turn was stopped", async () => {
    const r = await stoppedTurn([{ tool: true }, { done: true }], {
      extra: (c) => ({
        emit: (e: TurnEvent) => {
          if (e.type === "compaction_started") c.abort();
        },
      }),
    });
    expect(r.stateOptions).toHaveLength(0);
    expect(r.outcome.stopReason).toBe("interrupted");
    expect(r.streams).toHaveLength(1);
    expect(r.outcome.usage.input_tokens).toBe(100);
  });

  it("does not retry after the forced compaction of an overflow when the turn was stopped during it", async () => {
    // The settings overstate the window: the request is not due, the provider says it overflows.
    const r = await stoppedTurn([{ tool: true }, { error: "overflow" }, { done: true }], {
      budget: { ...BUDGET, contextWindowTokens: 200_000 },
    });
    expect(r.stateOptions).toHaveLength(1);
    expect(r.stateOptions[0]?.signal).toBe(r.controller.signal);
    expect(r.outcome.stopReason).toBe("interrupted");
    expect(r.streams).toHaveLength(2);
    expect(r.outcome.usage.input_tokens).toBe(100);
  });
});

describe("a Stop during a retry's backoff", () => {
  it("ends the wait at once, with no further model call", async () => {
    const HOUR = 3_600_000;
    const turn = stoppedTurn([{ error: "overloaded" }, { done: true }], {
      resultChars: 10,
      extra: (c) => ({
        retryDelayMs: () => HOUR,
        emit: (e: TurnEvent) => {
          if (e.type === "retry") setTimeout(() => c.abort(), 0);
        },
      }),
    });
    // Far short of the hour's backoff: a wait that ignored the Stop would still be sleeping.
    const settled = await Promise.race([
      turn.then(() => "settled"),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 2_000)),
    ]);
    expect(settled).toBe("settled");
    const r = await turn;
    expect(r.outcome.stopReason).toBe("interrupted");
    expect(r.streams).toHaveLength(1);
  });
});
