// Workflow mode: the master agent delegates a self-contained task to a sub-agent with
// agent_delegate. The sub-agent runs its own bounded tool loop on its own thread; every message of
// that thread is saved as an agent-tagged segment (transcript, R2, index: nothing is lost), and
// the master receives only the run's final answer as its tool_result. Replay leaves the segment
// out, so the delegated work reaches the master's context once, never a second time.
import type Anthropic from "@anthropic-ai/sdk";
import { coalesceBlocks } from "../../../core/coalesce";
import { toWireMessages } from "../../../core/replay";
import { sortableId } from "../../../core/ids";
import type { AgentTag, ContentBlock, ModelRequest, NewMessage, StoredMessage, ToolResultBlock, Usage } from "../../../core/types";
import { addUsage, zeroUsage } from "../../../core/types";
import type { ToolContext, ToolOutput, ToolRegistry } from "../tools/registry";
import { describeModelError } from "./model-errors";
import { keepKnownBlocks, pickUsage } from "./model-reply";

export const DELEGATE_TOOL = "agent_delegate";
/** A sub-agent's model calls are bounded independently of the master's iterations. */
export const SUB_AGENT_MAX_STEPS = 12;

export const SUB_AGENT_SYSTEM = [
  "You are a sub-agent: the main assistant delegated one self-contained task to you.",
  "Work on it with the tools you have, then answer with the result the main assistant needs: exact figures, ids and names, concise.",
  "Only your final answer reaches the main assistant; your intermediate steps stay in the record.",
].join("\n");

export interface SubAgentDeps {
  client: Anthropic;
  registry: ToolRegistry;
  toolContext: ToolContext;
  /** The master's next request: the sub-agent takes its model, output budget and tools from it. */
  masterRequest: ModelRequest;
  persist(messages: NewMessage[]): Promise<StoredMessage[]>;
  progress(message: string): void;
  maxSteps?: number;
}

export interface SubAgentRun {
  output: ToolOutput;
  usage: Usage;
  modelMs: number;
  segment: AgentTag;
}

export async function runSubAgent(deps: SubAgentDeps, task: { name: string; task: string; toolUseId: string }): Promise<SubAgentRun> {
  const segment: AgentTag = { segment: sortableId("agt"), name: task.name, toolUseId: task.toolUseId };
  const thread: StoredMessage[] = [];
  const save = async (messages: NewMessage[]) => {
    thread.push(...(await deps.persist(messages.map((m) => ({ ...m, agent: segment })))));
  };
  // A sub-agent cannot delegate in turn: the tool is neither offered nor runnable inside it.
  const tools = deps.masterRequest.tools.filter((t) => t.name !== DELEGATE_TOOL).map(({ cache_control: _c, ...t }) => t);
  const toolContext: ToolContext = { ...deps.toolContext, delegate: undefined, progress: (m) => deps.progress(`${task.name}: ${m}`) };
  let usage = zeroUsage();
  let modelMs = 0;
  const done = (output: ToolOutput): SubAgentRun => ({ output, usage, modelMs, segment });
  const pointer = () => {
    const seqs = thread.map((m) => m.seq);
    return seqs.length
      ? `its thread is saved as messages ${seqs[0]}-${seqs[seqs.length - 1]} (conversation_read ${JSON.stringify({ conversation_id: deps.toolContext.conversationId, from_seq: seqs[0], to_seq: seqs[seqs.length - 1] })})`
      : "nothing of it was saved";
  };

  await save([{ role: "user", content: [{ type: "text", text: task.task }] }]);
  const maxSteps = deps.maxSteps ?? SUB_AGENT_MAX_STEPS;
  for (let step = 0; step < maxSteps; step++) {
    const request: ModelRequest = {
      model: deps.masterRequest.model,
      max_tokens: deps.masterRequest.max_tokens,
      system: [{ type: "text", text: SUB_AGENT_SYSTEM }],
      tools,
      messages: toWireMessages(thread),
    };
    const started = Date.now();
    let reply: Anthropic.Message;
    try {
      reply = await deps.client.messages.create({ ...(request as unknown as Anthropic.MessageCreateParamsNonStreaming), stream: false });
    } catch (err) {
      modelMs += Date.now() - started;
      const failure = describeModelError(err);
      return done({ content: `agent ${task.name} stopped after ${step} steps: ${failure.message}; ${pointer()}`, isError: true });
    }
    modelMs += Date.now() - started;
    usage = addUsage(usage, reply.usage as Partial<Usage>);
    const content = coalesceBlocks(keepKnownBlocks(reply.content));
    if (content.length) await save([{ role: "assistant", content, usage: pickUsage(reply.usage), model: reply.model, stopReason: reply.stop_reason }]);
    const calls = content.filter((b): b is Extract<ContentBlock, { type: "tool_use" }> => b.type === "tool_use");
    if (reply.stop_reason !== "tool_use" || !calls.length) {
      const answer = content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
      return done({ content: `[agent ${task.name}: ${step + 1} model calls; ${pointer()}]\n\n${answer}` });
    }
    const results: ToolResultBlock[] = [];
    for (const call of calls) {
      deps.progress(`${task.name}: ${call.name}`);
      const out = await deps.registry.run(call.name, call.input, toolContext);
      results.push({ type: "tool_result", tool_use_id: call.id, content: out.blocks ?? out.content, ...(out.isError ? { is_error: true } : {}) });
    }
    await save([{ role: "user", content: results }]);
  }
  return done({ content: `agent ${task.name} used its ${maxSteps} model calls without finishing; ${pointer()}`, isError: true });
}
