// The agent loop's pause on client tools, driven with a scripted provider: the step's server calls
// run, the client's calls are left pending (nothing of the step's results saved), and the resumed
// loop saves every result in call order before it calls the model again.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { clientToolDefinition } from "../../agent/tools/client-tool";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { resumeAgentTurn, runAgentTurn, type TurnDeps } from "../../agent/turn-loop";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { blockAs } from "../blocks";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

function scripted(replies: { content: ContentBlock[]; stop: "tool_use" | "end_turn" }[]) {
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
          content: r.content,
          stop_reason: r.stop,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        };
        return { on: () => undefined, finalMessage: async () => message };
      },
    },
  };
  return { client: client as unknown as Anthropic, calls: () => calls };
}

const spec = (name: string) => ({ name, description: `${name} on the client`, input_schema: { type: "object" } });
const use = (id: string, name: string): ContentBlock => ({ type: "tool_use", id, name, input: { q: id } });

function depsFor(client: Anthropic, saved: StoredMessage[], pauseForClient = true): TurnDeps {
  const registry = new ToolRegistry()
    .register({
      name: "echo",
      description: "echo",
      capability: "echo",
      core: true,
      input: z.object({ q: z.string() }),
      run: async ({ q }) => ({ content: `echo ${q}` }),
    })
    .register(clientToolDefinition(spec("pick_a"), { core: true }))
    .register(clientToolDefinition(spec("pick_b"), { core: true }));
  return {
    turnId: "turn_1",
    client,
    registry,
    toolContext: { activeTools: [] } as unknown as ToolContext,
    maxIterations: 10,
    contextWindowTokens: 100_000,
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
    pauseForClient,
  };
}

const step = [use("t1", "pick_a"), use("t2", "echo"), use("t3", "pick_b")];

describe("the loop's pause on client tools", () => {
  it("runs the server calls, leaves the client's pending, and resumes with every result in call order", async () => {
    const { client, calls } = scripted([
      { content: step, stop: "tool_use" },
      { content: [{ type: "text", text: "done" }], stop: "end_turn" },
    ]);
    const saved: StoredMessage[] = [];
    const deps = depsFor(client, saved);
    const paused = await runAgentTurn(deps, [{ type: "text", text: "go" }]);
    expect(paused.stopReason).toBe("requires_action");
    expect(paused.paused!.pending.map((c) => c.id)).toEqual(["t1", "t3"]);
    expect(paused.paused!.results.map((r) => r?.content ?? null)).toEqual([null, "echo t2", null]);
    expect(paused.paused!.state).toMatchObject({ step: 1, modelCalls: 1 });
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant"]);

    const earlier = [...saved];
    const done = await resumeAgentTurn(deps, {
      paused: paused.paused!,
      clientResults: [
        { type: "tool_result", tool_use_id: "t3", content: "b" },
        { type: "tool_result", tool_use_id: "t1", content: "a", is_error: true },
      ],
      turnMessages: earlier,
    });
    expect(done.stopReason).toBe("end_turn");
    expect(done.modelCalls).toBe(2);
    expect(done.usage.input_tokens).toBe(20);
    expect(calls()).toBe(2);
    expect(saved[2].content).toEqual([
      { type: "tool_result", tool_use_id: "t1", content: "a", is_error: true },
      { type: "tool_result", tool_use_id: "t2", content: "echo t2" },
      { type: "tool_result", tool_use_id: "t3", content: "b" },
    ]);
  });

  it("never pauses a loop that cannot wait (a sub-agent): the client tools answer an error", async () => {
    const { client } = scripted([
      { content: step, stop: "tool_use" },
      { content: [{ type: "text", text: "done" }], stop: "end_turn" },
    ]);
    const saved: StoredMessage[] = [];
    const outcome = await runAgentTurn(depsFor(client, saved, false), [{ type: "text", text: "go" }]);
    expect(outcome.stopReason).toBe("end_turn");
    const results = saved[2].content.map((b) => blockAs(b, "tool_result"));
    expect(results.map((r) => !!r.is_error)).toEqual([true, false, true]);
  });
});
