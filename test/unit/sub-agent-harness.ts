// A sub-agent run against a scripted provider, for the unit tests of what its master is told: the
// provider answers its calls with the given replies in turn, and the agent has one core tool, `echo`.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { runSubAgent } from "../../agent/sub-agent";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { catalogEntry } from "../../core/models/lookup";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { persistInto } from "./turn-harness";

/** One scripted reply: its content, stop reason and output tokens (100 unless given). */
export interface ScriptedReply {
  content: ContentBlock[];
  stop: string;
  out?: number;
}

/** A provider answering its calls with `replies` in turn (the last one again after them), recording the requests. */
function scripted(replies: readonly ScriptedReply[], requests: ModelRequest[]): Anthropic {
  const client = {
    messages: {
      stream(request: ModelRequest) {
        requests.push(structuredClone(request));
        const { content, stop, out } = replies[Math.min(requests.length, replies.length) - 1];
        const message = {
          id: `msg_${requests.length}`,
          type: "message",
          role: "assistant",
          model: "scripted",
          content,
          stop_reason: stop,
          stop_sequence: null,
          usage: {
            input_tokens: 10,
            output_tokens: out ?? 100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        };
        return { on: () => undefined, finalMessage: async () => message };
      },
    },
  };
  return client as unknown as Anthropic;
}

/**
 * Delegates `task` to an agent named "figures" whose model answers with `replies`; `echo` calls
 * are recorded in `ran` and answered `echo <q>`.
 */
export async function delegateScripted(replies: readonly ScriptedReply[], task: string) {
  const saved: StoredMessage[] = [];
  const requests: ModelRequest[] = [];
  const ran: string[] = [];
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
  const run = await runSubAgent(
    {
      client: scripted(replies, requests),
      model: catalogEntry("claude-sonnet-5-5")!,
      registry,
      toolContext: { activeTools: [], conversationId: "conv_1" } as unknown as ToolContext,
      contextWindowTokens: 100_000,
      persist: persistInto(saved),
    },
    { name: "figures", task, toolUseId: "d1" },
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
  return { run, saved, requests, ran };
}
