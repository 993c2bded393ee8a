// A sub-agent whose reply is cut off by its output limit (a tool call cut in half is never run, so
// its turn ends there) reports a partial answer, as an error: never as a finished one.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { runSubAgent } from "../../agent/sub-agent";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import type { ContentBlock, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";

/** A provider answering every call with the same reply, stopped for `stop`. */
function scripted(content: ContentBlock[], stop: string) {
  const client = {
    messages: {
      stream() {
        const message = {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "scripted",
          content,
          stop_reason: stop,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        };
        return { on: () => undefined, finalMessage: async () => message };
      },
    },
  };
  return client as unknown as Anthropic;
}

const registry = new ToolRegistry().register({
  name: "echo",
  description: "echo",
  capability: "echo",
  core: true,
  input: z.object({ q: z.string() }),
  run: async ({ q }) => ({ content: `echo ${q}` }),
});

async function runCutOff(stop: string) {
  const saved: StoredMessage[] = [];
  const client = scripted(
    [
      { type: "text", text: "I will look up the two figures." },
      { type: "tool_use", id: "t1", name: "echo", input: { q: "first" } },
    ],
    stop,
  );
  const run = await runSubAgent(
    {
      client,
      model: catalogEntry("claude-sonnet-5-5")!,
      registry,
      toolContext: { activeTools: [], conversationId: "conv_1" } as unknown as ToolContext,
      contextWindowTokens: 100_000,
      persist: persistInto(saved),
    },
    { name: "figures", task: "Find both figures", toolUseId: "d1" },
    {
      turnId: "turn_1",
      request: {
        model: "scripted",
        max_tokens: 100,
        system: [],
        tools: [],
        messages: [{ role: "user", content: "go" }],
      },
      emit: () => undefined,
    },
  );
  return { run, saved };
}

describe("a sub-agent cut off before it finished", () => {
  it("reports a max_tokens stop as a partial answer, as an error", async () => {
    const { run } = await runCutOff("max_tokens");
    expect(run.output.isError).toBe(true);
    expect(run.output.content).toContain("output limit");
    expect(run.output.content).toContain("partial");
    expect(run.output.content).toContain("I will look up the two figures.");
  });

  it("reports a model_context_window_exceeded stop as a partial answer, as an error", async () => {
    const { run } = await runCutOff("model_context_window_exceeded");
    expect(run.output.isError).toBe(true);
    expect(run.output.content).toContain("context window");
    expect(run.output.content).toContain("partial");
  });
});
