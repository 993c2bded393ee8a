// The turn's bound of model calls (maxToolIterations) across a pause on client tools: the calls a
// sub-agent made before the pause still count after it, so a resumed turn gets only what is left.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { runSubAgent } from "../../agent/sub-agent";
import { agentDelegate } from "../../agent/tools/agent-delegate";
import { clientToolDefinition } from "../../agent/tools/client-tool";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { resumeAgentTurn, runAgentTurn, type TurnDeps } from "../../agent/turn-loop";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const use = (id: string, name: string, input: Record<string, unknown>): ContentBlock => ({
  type: "tool_use",
  id,
  name,
  input,
});

/** A provider answering each call with the next reply, the master's and the sub-agent's alike. */
function scripted(replies: { content: ContentBlock[]; stop: "tool_use" | "end_turn" }[]) {
  let calls = 0;
  const client = {
    messages: {
      stream() {
        const r = replies[calls++] ?? { content: [use(`e${calls}`, "echo", { q: "more" })], stop: "tool_use" };
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

function depsFor(client: Anthropic, saved: StoredMessage[], maxIterations: number): TurnDeps {
  const registry = new ToolRegistry()
    .register({
      name: "echo",
      description: "echo",
      capability: "echo",
      core: true,
      input: z.object({ q: z.string() }),
      run: async ({ q }) => ({ content: `echo ${q}` }),
    })
    .register(agentDelegate)
    .register(
      clientToolDefinition(
        { name: "pick", description: "pick on the client", input_schema: { type: "object" } },
        { core: true },
      ),
    );
  const toolContext = { activeTools: ["agent_delegate"], conversationId: "conv_1" } as unknown as ToolContext;
  const persist = persistInto(saved);
  return {
    turnId: "turn_1",
    client,
    registry,
    toolContext,
    maxIterations,
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
    persist,
    emit: () => undefined,
    pauseForClient: true,
    delegate: (task, parent) =>
      runSubAgent(
        { client, model: SONNET, registry, toolContext, contextWindowTokens: 100_000, persist },
        task,
        parent,
      ),
  };
}

describe("the turn's bound across a pause", () => {
  it("keeps a sub-agent's calls made before the pause counted after it", async () => {
    const { client, calls } = scripted([
      // The master delegates and calls a client tool in one step: the turn pauses after the run.
      {
        content: [use("d1", "agent_delegate", { task: "look", name: "a" }), use("p1", "pick", { q: "x" })],
        stop: "tool_use",
      },
      // The sub-agent: one tool step, then its answer.
      { content: [use("s1", "echo", { q: "in" })], stop: "tool_use" },
      { content: [{ type: "text", text: "found it" }], stop: "end_turn" },
      // Then the master asks for tools on every call: only the bound ends it.
    ]);
    const saved: StoredMessage[] = [];
    const deps = depsFor(client, saved, 4);
    const paused = await runAgentTurn(deps, [{ type: "text", text: "go" }]);
    expect(paused.stopReason).toBe("requires_action");
    expect(paused.paused!.state).toMatchObject({ step: 1, calls: 3 });
    expect(calls()).toBe(3);

    const done = await resumeAgentTurn(deps, {
      paused: paused.paused!,
      clientResults: [{ type: "tool_result", tool_use_id: "p1", content: "picked" }],
      turnMessages: [...saved],
    });
    expect(done.stopReason).toBe("max_iterations");
    // Four in all: the master's first, the sub-agent's two, and one more of the master's.
    expect(calls()).toBe(4);
  });
});
