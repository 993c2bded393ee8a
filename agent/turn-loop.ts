// The agent loop of one turn: call the model (streaming), run the tools it asks for, feed the
// results back, until it stops or the iteration bound is reached. Each step is persisted as it
// completes, so a failure later in the turn never loses what came before. The master agent and
// its sub-agents (workflow mode, ./sub-agent.ts) run this same loop; what differs between them
// (request, tools, bound, persistence, event tagging) comes in through TurnDeps.
//
// The last lines of defence live here too: before each call the compactor checks the request
// against the budget (in memory only); a provider overflow 400 forces one compaction and one
// retry; a max_tokens stop continues the reply unless the input already fills the window.
import type Anthropic from "@anthropic-ai/sdk";
import { coalesceBlocks } from "../core/coalesce";
import type { TurnEvent } from "../core/events";
import { toolResultText } from "../core/render";
import type { ContentBlock, ModelRequest, NewMessage, StoredMessage, ToolResultBlock, Usage } from "../core/types";
import { addUsage, zeroUsage } from "../core/types";
import type { ToolContext, ToolOutput, ToolRegistry } from "./tools/registry";
import { runsOnClient } from "./tools/client-tool";
import { describeModelError, type ModelFailure } from "./model-errors";
import { keepKnownBlocks, pickUsage } from "./model-reply";
import type { CompactionOutcome, TurnCompactor } from "./turn-compaction";

/** A task the model handed to agent_delegate. */
export interface DelegatedTask {
  name: string;
  task: string;
  toolUseId: string;
}

/** What a delegated run gives back to the loop that delegated it. */
export interface DelegatedRun {
  output: ToolOutput;
  usage: Usage;
  modelMs: number;
}

/** The delegating loop as the sub-agent sees it: its current request and its event stream. */
export interface DelegationParent {
  turnId: string;
  request: ModelRequest;
  emit(event: TurnEvent): void;
}

export interface TurnDeps {
  turnId: string;
  client: Anthropic;
  registry: ToolRegistry;
  toolContext: ToolContext;
  maxIterations: number;
  contextWindowTokens: number;
  /** The in-turn safety net; absent, requests go out as built. */
  compactor?: TurnCompactor;
  /** The full request for the next model call, assembled from the freshest stored state. */
  buildRequest(): ModelRequest;
  /** Appends messages to the conversation (R2, then the DO index) and returns them as stored. */
  persist(messages: NewMessage[]): Promise<StoredMessage[]>;
  emit(event: TurnEvent): void;
  /** Told of every compaction pass. */
  onCompaction?(outcome: CompactionOutcome, forced: boolean): void;
  /** Told of every model request as sent, with the tokens the provider counted (null on failure). */
  onRequest?(request: ModelRequest, step: number, reportedTokens: number | null, compacted: boolean): void;
  /** Workflow mode: runs a delegated task (as a loop of its own); absent, this loop cannot delegate. */
  delegate?(task: DelegatedTask, parent: DelegationParent): Promise<DelegatedRun>;
  /**
   * The master's loop may pause for client tools; absent (a sub-agent), a client tool's call runs
   * its definition's `run`, an error result: a sub-agent's thread has no client to wait for.
   */
  pauseForClient?: boolean;
}

/** A client tool call the turn waits on. */
export interface PendingCall {
  id: string;
  name: string;
  input: unknown;
}

/** Where a loop stands: enough to continue it later, in another request or another object instance. */
export interface LoopState {
  /** The next step to run. */
  step: number;
  usage: Usage;
  modelMs: number;
  modelCalls: number;
}

/** A step whose calls wait on the client: every call's result in call order, null where the client owes it. */
export interface PausedStep {
  state: LoopState;
  results: Array<ToolResultBlock | null>;
  pending: PendingCall[];
}

export interface TurnOutcome {
  stopReason: string;
  usage: Usage;
  modelMs: number;
  /** Model calls that answered. */
  modelCalls: number;
  failure?: ModelFailure;
  /** stopReason "requires_action": the step the client's results will complete. */
  paused?: PausedStep;
}

const PREVIEW_CHARS = 200;
/** A max_tokens stop with the input this close to the window has no room to continue into. */
export const CONTEXT_FULL_MARGIN_TOKENS = 512;

const promptTokens = (u: Partial<Usage>) => (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);

export async function runAgentTurn(deps: TurnDeps, userContent: ContentBlock[]): Promise<TurnOutcome> {
  return continueTurn(deps, { step: 0, usage: zeroUsage(), modelMs: 0, modelCalls: 0 }, [], [{ role: "user", content: userContent }]);
}

/**
 * A paused turn's second half: the step's results, the server's and the client's in call order,
 * are saved as one message (a tool_use is never left without its answer), and the loop goes on.
 */
export async function resumeAgentTurn(deps: TurnDeps, paused: PausedStep, clientResults: readonly ToolResultBlock[], turnMessages: readonly StoredMessage[]): Promise<TurnOutcome> {
  return continueTurn(deps, paused.state, turnMessages, [{ role: "user", content: completeStep(paused, clientResults) }]);
}

/** The step's results in call order, each pending slot filled from the client's results by id. */
export function completeStep(paused: PausedStep, clientResults: readonly ToolResultBlock[]): ToolResultBlock[] {
  const byId = new Map(clientResults.map((r) => [r.tool_use_id, r]));
  let next = 0;
  return paused.results.map((r) => r ?? byId.get(paused.pending[next++].id)!);
}

async function continueTurn(deps: TurnDeps, from: LoopState, earlier: readonly StoredMessage[], first: NewMessage[]): Promise<TurnOutcome> {
  const { turnId, emit, compactor } = deps;
  const turnMessages: StoredMessage[] = [...earlier];
  const persist = async (messages: NewMessage[]) => {
    const stored = await deps.persist(messages);
    turnMessages.push(...stored);
    return stored;
  };
  await persist(first);
  let { usage, modelMs, modelCalls } = from;
  let overflowRetried = false;

  const compact = async (request: ModelRequest, forced: boolean): Promise<ModelRequest> => {
    emit({ type: "compaction_started", turnId, tokens: compactor!.effective(request), budgetTokens: compactor!.budgetTokens, forced });
    const outcome = await compactor!.compact(request, turnMessages);
    const r = outcome.report;
    emit({
      type: "compaction",
      turnId,
      forced,
      targets: r.targets.length,
      tokensBefore: r.tokensBefore,
      tokensAfter: r.tokensAfter,
      tokensSaved: r.tokensSaved,
      durationMs: outcome.durationMs,
      summarized: outcome.summarized,
      details: r.targets,
    });
    deps.onCompaction?.(outcome, forced);
    return outcome.request;
  };

  for (let step = from.step; step < deps.maxIterations; step++) {
    let request = deps.buildRequest();
    if (compactor) {
      request = compactor.apply(request);
      if (compactor.due(request)) request = await compact(request, false);
    }
    const started = Date.now();
    let reply: Anthropic.Message | null = null;
    while (!reply) {
      try {
        const stream = deps.client.messages.stream(request as unknown as Anthropic.MessageStreamParams);
        stream.on("text", (text) => emit({ type: "delta", turnId, text }));
        reply = await stream.finalMessage();
      } catch (err) {
        const failure = describeModelError(err);
        // The estimate and the calibration both missed: compact regardless of the threshold and
        // retry, exactly once per turn.
        if (failure.type === "context_overflow" && compactor && !overflowRetried) {
          overflowRetried = true;
          if (failure.overflow) compactor.learnFromOverflow(request, failure.overflow.promptTokens, failure.overflow.maxTokens);
          request = await compact(request, true);
          continue;
        }
        modelMs += Date.now() - started;
        deps.onRequest?.(request, step, null, compactor?.active ?? false);
        return { stopReason: "error", usage, modelMs, modelCalls, failure };
      }
    }
    modelMs += Date.now() - started;
    modelCalls++;
    usage = addUsage(usage, reply.usage as Partial<Usage>);
    compactor?.calibrate(request, promptTokens(reply.usage as Partial<Usage>));
    deps.onRequest?.(request, step, promptTokens(reply.usage as Partial<Usage>), compactor?.active ?? false);

    const content = coalesceBlocks(keepKnownBlocks(reply.content));
    if (content.length) {
      // Secret tool inputs (a PDF password) run below but are never stored: the transcript, the
      // replay, prompt snapshots and the cortex are all built from what is persisted here.
      const stored = content.map((b) => (b.type === "tool_use" ? { ...b, input: deps.registry.withhold(b.name, b.input) } : b));
      await persist([{ role: "assistant", content: stored, usage: pickUsage(reply.usage), model: reply.model, stopReason: reply.stop_reason }]);
    }
    if (reply.stop_reason === "max_tokens") {
      // Cut off mid-reply: continue it (the saved partial reply is the next call's last message),
      // unless the input already fills the window, where the loop would only spin.
      if (promptTokens(reply.usage as Partial<Usage>) >= deps.contextWindowTokens - CONTEXT_FULL_MARGIN_TOKENS) return { stopReason: "context_full", usage, modelMs, modelCalls };
      if (content.length && !content.some((b) => b.type === "tool_use")) continue;
    }
    const calls = content.filter((b): b is Extract<ContentBlock, { type: "tool_use" }> => b.type === "tool_use");
    if (reply.stop_reason !== "tool_use" || !calls.length) return { stopReason: reply.stop_reason ?? "end_turn", usage, modelMs, modelCalls };

    const results: Array<ToolResultBlock | null> = [];
    const pending: PendingCall[] = [];
    const progress = (message: string) => emit({ type: "progress", turnId, message });
    for (const call of calls) {
      emit({ type: "tool_use", turnId, id: call.id, name: call.name, input: deps.registry.withhold(call.name, call.input) });
      const tool = deps.registry.get(call.name);
      if (runsOnClient(tool) && deps.pauseForClient && !deps.registry.refusal(call.name, deps.toolContext.activeTools)) {
        // The client runs it; the server calls of the same step still run now.
        pending.push({ id: call.id, name: call.name, input: call.input });
        results.push(null);
        continue;
      }
      // Workflow mode: a delegated run saves its own thread (agent-tagged, never replayed here)
      // and counts towards this turn's usage and model time.
      const delegate = deps.delegate
        ? async (task: string, name: string) => {
            const run = await deps.delegate!({ name, task, toolUseId: call.id }, { turnId, request, emit });
            usage = addUsage(usage, run.usage);
            modelMs += run.modelMs;
            return run.output;
          }
        : undefined;
      const out = await deps.registry.run(call.name, call.input, { ...deps.toolContext, progress, delegate, turnId, callId: call.id });
      const block: ToolResultBlock = { type: "tool_result", tool_use_id: call.id, content: out.blocks ?? out.content, ...(out.isError ? { is_error: true } : {}) };
      const text = toolResultText(block);
      emit({ type: "tool_result", turnId, tool_use_id: call.id, name: call.name, is_error: !!out.isError, chars: text.length, preview: text.slice(0, PREVIEW_CHARS) });
      results.push(block);
    }
    if (pending.length) return { stopReason: "requires_action", usage, modelMs, modelCalls, paused: { state: { step: step + 1, usage, modelMs, modelCalls }, results, pending } };
    await persist([{ role: "user", content: results as ToolResultBlock[] }]);
  }
  return { stopReason: "max_iterations", usage, modelMs, modelCalls };
}
