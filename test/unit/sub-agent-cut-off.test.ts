// A sub-agent whose reply is cut off (its output limit, the context window) after a complete tool
// call: the call is never run (a cut call's input may be incomplete) but answered at once as not
// run, with more output room for the next call, and the agent goes on to its answer (turn-loop.ts).
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { runSubAgent } from "../../agent/sub-agent";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import type { ContentBlock, ModelRequest, StoredMessage, ToolResultBlock } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";

/** A provider answering its calls with `replies` in turn (the last one again after them), recording the requests. */
function scripted(replies: Array<{ content: ContentBlock[]; stop: string }>, requests: ModelRequest[]) {
  const client = {
    messages: {
      stream(request: ModelRequest) {
        requests.push(structuredClone(request));
        const { content, stop } = replies[Math.min(requests.length, replies.length) - 1];
        const message = {
          id: `msg_${requests.length}`,
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
  run: async ({ q }) => {
    ran.push(q);
    return { content: `echo ${q}` };
  },
});
const ran: string[] = [];

async function runCutOff(stop: string) {
  const saved: StoredMessage[] = [];
  const requests: ModelRequest[] = [];
  ran.length = 0;
  const client = scripted(
    [
      {
        content: [
          { type: "text", text: "I will look up the two figures." },
          { type: "tool_use", id: "t1", name: "echo", input: { q: "first" } },
        ],
        stop,
      },
      { content: [{ type: "text", text: "The figures are 1 and 2." }], stop: "end_turn" },
    ],
    requests,
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
  return { run, saved, requests };
}

describe("a sub-agent cut off after a complete tool call", () => {
  for (const stop of ["max_tokens", "model_context_window_exceeded"]) {
    it(`${stop}: answers the call as not run, goes on with more room, and reports its answer`, async () => {
      const { run, saved, requests } = await runCutOff(stop);
      // Never run: its input may be incomplete.
      expect(ran).toEqual([]);
      // Answered at once, right after the cut reply, so the call never goes unanswered.
      const cut = saved.findIndex((m) => m.role === "assistant" && m.stopReason === stop);
      expect(cut).toBeGreaterThanOrEqual(0);
      const results = saved[cut + 1].content.filter((b): b is ToolResultBlock => b.type === "tool_result");
      expect(results).toEqual([
        expect.objectContaining({ tool_use_id: "t1", is_error: true, content: expect.stringContaining("cut off") }),
      ]);
      // The loop went on, with more output room, to the agent's answer.
      expect(requests).toHaveLength(2);
      expect(requests[1].max_tokens).toBeGreaterThan(requests[0].max_tokens);
      expect(run.output.isError).toBeFalsy();
      expect(run.output.content).toContain("The figures are 1 and 2.");
    });
  }
});
