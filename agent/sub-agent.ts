// Workflow mode: the master agent delegates a self-contained task to a sub-agent with
// agent_delegate. The sub-agent runs the master's own turn loop (./turn-loop.ts) — streaming, the
// in-turn compactor, the overflow retry, max_tokens continuation — on its own thread, with its own
// tools (no delegation), its own bound of model calls (and the turn's, which its calls count
// against with the master's: settings' maxToolIterations), its messages saved as an agent-tagged
// segment (transcript, R2, index: nothing is lost) and its events tagged to the caller and the
// sockets. The master receives only the run's final answer as its tool_result; replay leaves the
// segment out, so the delegated work reaches the master's context once, never a second time.
import type Anthropic from "@anthropic-ai/sdk";
import type { BlockOrigin } from "../core/compactor";
import { toWireMessages, withCacheBreakpoints } from "../core/replay";
import { fitRequestLimits } from "../core/request-limits";
import { toolResultLocator } from "../core/request-placeholders";
import { knownThinking } from "../core/thinking-guard";
import { sortableId } from "../core/ids";
import { cacheScopeFor, scopedSystemText } from "../core/system-prompt";
import { zeroUsage } from "../core/types";
import type { ModelEntry } from "../core/models/catalog";
import type { AgentTag, ContentBlock, NewMessage, StoredMessage } from "../core/types";
import type { ToolContext, ToolOutput, ToolRegistry } from "./tools/registry";
import { blockOrigins, type TurnCompactor } from "./turn-compaction";
import {
  INTERRUPTED,
  runAgentTurn,
  type DelegatedRun,
  type DelegatedTask,
  type DelegationParent,
  type TurnOutcome,
} from "./turn-loop";

export const DELEGATE_TOOL = "agent_delegate";
/**
 * A sub-agent's own bound of model calls. Its calls also count against the turn's bound
 * (maxToolIterations) with the master's, so it gets at most what the turn has left, fewer if
 * delegations in the same step take some first.
 */
export const SUB_AGENT_MAX_STEPS = 12;

/** The result of a delegation the turn has no model calls left for. */
export const turnBoundUsed = (limit: number) =>
  `not run: this turn has used its bound of ${limit} model calls (the maxToolIterations setting), which its sub-agents' calls count against with the main agent's`;

export const SUB_AGENT_SYSTEM = [
  "You are a sub-agent: the main assistant delegated one self-contained task to you.",
  "Work on it with the tools you have, then answer with the result the main assistant needs: exact figures, ids and names, concise.",
  "Only your final answer reaches the main assistant; your intermediate steps stay in the record.",
].join("\n");

export interface SubAgentDeps {
  client: Anthropic;
  /** The master's model: the sub-agent runs on it with the master's thinking and effort. */
  model: ModelEntry;
  registry: ToolRegistry;
  toolContext: ToolContext;
  contextWindowTokens: number;
  /** Appends messages to the conversation and returns them as stored (the master's persistence). */
  persist(messages: NewMessage[]): Promise<StoredMessage[]>;
  /** A fresh in-turn compactor for the sub-agent's thread, given where its blocks are stored. */
  compactor?(originOf: () => (block: ContentBlock) => BlockOrigin | undefined): TurnCompactor;
  maxSteps?: number;
}

export interface SubAgentRun extends DelegatedRun {
  segment: AgentTag;
}

export async function runSubAgent(
  deps: SubAgentDeps,
  task: DelegatedTask,
  parent: DelegationParent,
): Promise<SubAgentRun> {
  const segment: AgentTag = { segment: sortableId("agt"), name: task.name, toolUseId: task.toolUseId };
  const conversationId = deps.toolContext.conversationId;
  const thread: StoredMessage[] = [];
  // The master's server tools as its request had them (the registry's tools are built per step).
  const serverTools = parent.request.tools.filter((t) => "type" in t).map(({ cache_control: _c, ...t }) => t);
  // The tools as the master's requests carry them (core/replay.ts), built at each step from the
  // conversation's active tools as they are then: a tool activated since (by the master in the step
  // that delegated, or by the sub-agent itself) is offered from its next step on. A sub-agent cannot
  // delegate in turn: the tool is neither offered nor runnable inside it.
  const tools = () => [
    ...deps.registry.schemasFor(deps.toolContext.activeTools).filter((t) => t.name !== DELEGATE_TOOL),
    ...serverTools,
  ];
  // The master's context, its activeTools read live (a spread would freeze them at this point).
  const toolContext: ToolContext = {
    ...deps.toolContext,
    get activeTools() {
      return deps.toolContext.activeTools;
    },
    delegate: undefined,
  };
  const maxSteps = deps.maxSteps ?? SUB_AGENT_MAX_STEPS;
  const { budget } = parent;
  // Nothing left: the task is answered as not run, and nothing of it is saved.
  if (budget && budget.used >= budget.limit)
    return { output: { content: turnBoundUsed(budget.limit), isError: true }, usage: zeroUsage(), modelMs: 0, segment };

  // Opened with the tenant's cache scope, as the master's prompt is: the text is the same for every
  // tenant, and the task that follows it is the tenant's (core/system-prompt.ts, CacheScope).
  const system = scopedSystemText(await cacheScopeFor(deps.toolContext.tenantId), SUB_AGENT_SYSTEM);
  const outcome = await runAgentTurn(
    {
      turnId: parent.turnId,
      signal: parent.signal,
      onUsage: parent.onUsage,
      client: deps.client,
      registry: deps.registry,
      toolContext,
      maxIterations: maxSteps,
      budget,
      contextWindowTokens: deps.contextWindowTokens,
      model: deps.model,
      compactor: deps.compactor?.(() => blockOrigins(conversationId, thread)),
      knownThinking: () => knownThinking(thread),
      // The API's count and size limits hold for its requests as for the master's (core/request-limits.ts).
      buildRequest: () =>
        fitRequestLimits(
          {
            model: parent.request.model,
            max_tokens: parent.request.max_tokens,
            ...(parent.request.thinking ? { thinking: parent.request.thinking } : {}),
            ...(parent.request.output_config ? { output_config: parent.request.output_config } : {}),
            // Cached as the master's requests are: each step reads the step before it from the cache.
            system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
            tools: tools(),
            messages: withCacheBreakpoints(toWireMessages(thread), 0),
          },
          deps.model.maxImages,
          { conversationId, locate: toolResultLocator(thread) },
        ).request,
      persist: async (messages) => {
        const stored = await deps.persist(messages.map((m) => ({ ...m, agent: segment })));
        thread.push(...stored);
        return stored;
      },
      emit: (event) => parent.emit({ ...event, agent: { segment: segment.segment, name: task.name } }),
    },
    [{ type: "text", text: task.task }],
  );
  return {
    output: reportOf(outcome, { name: task.name, maxSteps, thread, conversationId, turnLimit: budget?.limit }),
    usage: outcome.usage,
    modelMs: outcome.modelMs,
    segment,
  };
}

/** A message's text blocks, one a line. */
const textOf = (message: StoredMessage) =>
  message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");

/** The master's tool result: the final answer, or why there is none, with the call that shows the thread. */
function reportOf(
  outcome: TurnOutcome,
  run: { name: string; maxSteps: number; thread: readonly StoredMessage[]; conversationId: string; turnLimit?: number },
): ToolOutput {
  const { name, maxSteps, thread, conversationId, turnLimit } = run;
  const seqs = thread.map((m) => m.seq);
  const pointer = seqs.length
    ? `its thread is saved as messages ${seqs[0]}-${seqs[seqs.length - 1]} (conversation_read ${JSON.stringify({ conversation_id: conversationId, from_seq: seqs[0], to_seq: seqs[seqs.length - 1] })})`
    : "nothing of it was saved";
  if (outcome.failure)
    return {
      content: `agent ${name} stopped after ${outcome.modelCalls} model calls: ${outcome.failure.message}; ${pointer}`,
      isError: true,
    };
  if (outcome.stopReason === "max_iterations" && outcome.turnBound)
    return {
      content: `agent ${name} stopped after ${outcome.modelCalls} model calls without finishing: the turn used its bound of ${turnLimit ?? maxSteps} model calls (the maxToolIterations setting), which sub-agents' calls count against with the main agent's; ${pointer}`,
      isError: true,
    };
  if (outcome.stopReason === "max_iterations")
    return { content: `agent ${name} used its ${maxSteps} model calls without finishing; ${pointer}`, isError: true };
  // A refused reply is never passed on (nor, through the master's tool result, replayed).
  if (outcome.stopReason === "refusal")
    return { content: `agent ${name} stopped: the model declined the task; ${pointer}`, isError: true };
  // The answer is the trailing assistant messages: one reply, or a reply and its continuations.
  const trailing: StoredMessage[] = [];
  for (let i = thread.length - 1; i >= 0 && thread[i].role === "assistant"; i--) trailing.unshift(thread[i]);
  const answer = trailing.map(textOf).join("");
  const header = `[agent ${name}: ${outcome.modelCalls} model calls; ${pointer}]`;
  // The turn was stopped: not the agent's failure, and what it had written so far is passed on as such.
  if (outcome.stopReason === INTERRUPTED)
    return {
      content: `${header}\n[interrupted: the turn was stopped before the agent finished${answer ? "; its answer is partial" : ""}]${answer ? `\n\n${answer}` : ""}`,
    };
  if (outcome.stopReason === "context_full")
    return {
      content: `${header}\n[its context filled up before it finished: the answer is partial]\n\n${answer}`,
      isError: true,
    };
  // The loop goes on after a cut reply, its calls answered as not run (turn-loop.ts): an outcome
  // that still ends on a cut is reported as the partial answer it is, never as a finished one.
  if (outcome.stopReason === "max_tokens" || outcome.stopReason === "model_context_window_exceeded")
    return {
      content: `${header}\n[cut off by ${outcome.stopReason === "max_tokens" ? "its output limit" : "the model's context window"} before it finished: the answer is partial]${answer ? `\n\n${answer}` : ""}`,
      isError: true,
    };
  if (answer.trim()) return { content: `${header}\n\n${answer}` };
  // A final reply with no text (the API's empty end_turn after tool results, which is never saved,
  // or a reply of thinking only): the agent's answer is the text it wrote last before it, if any.
  const before = [...thread].reverse().find((m) => m.role === "assistant" && textOf(m).trim());
  if (before)
    return { content: `${header}\n[its final reply was empty; its last words before it:]\n\n${textOf(before)}` };
  return { content: `agent ${name} ended without an answer: its final reply had no text; ${pointer}`, isError: true };
}
