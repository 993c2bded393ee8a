// The agent loop of one turn: call the model (streaming), run the tools it asks for, feed the
// results back, until it stops or the iteration bound is reached. Each step is persisted as it
// completes, so a failure later in the turn never loses what came before. The master agent and
// its sub-agents (workflow mode, ./sub-agent.ts) run this same loop; what differs between them
// (request, tools, bound, persistence, event tagging) comes in through TurnDeps.
//
// Every stop reason of the Messages API is handled (build-with-claude/handling-stop-reasons):
// `tool_use` runs the tools; `pause_turn` (a long server-tool turn) calls again with the paused
// reply as the last message, as the API asks; `max_tokens` and `model_context_window_exceeded`
// continue the reply through a user message (core/replay-rules.ts: current models refuse prefill),
// with more room when the reply was all thinking, unless the input already fills the window; a cut
// reply's tool calls are never run (their input may be incomplete) but answered at once as not run,
// and the loop goes on with more room, the model making them again;
// `refusal` keeps the refused reply out of every later request and asks the fallback model when
// the settings name one. An error event inside a stream (overloaded, internal) is retried with the
// SDK's backoff, keeping the text already streamed as the partial reply it is.
//
// A stopped turn (`signal`) ends at the next safe point: the model call under way is cancelled and
// the text it streamed saved as the reply, with stopReason "interrupted"; a compaction's state call
// under way is cancelled too (its deterministic state stands in) and a retry's backoff cut short,
// with no model call after either; a reply's tool calls that have not run yet are answered as
// interrupted rather than run; no further step starts.
//
// The last lines of defence live here too: before each call the compactor checks the request
// against the budget (in memory only); a provider overflow 400 forces one compaction and one
// retry. Thinking blocks go back exactly as they came, and only while nothing before them moved
// (core/thinking-guard.ts): each reply is stored with the prefix its thinking followed. With a
// compactor, the guard runs once, on the request as sent (after a compaction stands in for what it
// replaced), never on the uncompacted build: a reply to a compacted request followed the compacted
// prefix, and its thinking goes back while that prefix stands.
import type Anthropic from "@anthropic-ai/sdk";
import { coalesceBlocks } from "../core/coalesce";
import { catalogEntry } from "../core/models/lookup";
import { priced } from "../core/pricing";
import type { ContentBlock, ModelRequest, NewMessage, StoredMessage, ToolResultBlock, Usage } from "../core/types";
import { addUsage, isThinkingBlock, zeroUsage } from "../core/types";
import type { ModelEntry } from "../core/models/catalog";
import { beforeThinkingGuard } from "../core/replay";
import { describeModelError, isRetryableStreamError, type ModelFailure } from "./model-errors";
import { retryDelayMs, streamCall } from "./model-call";
import { billedUsage, partialText, partialUsage, storedBlocks } from "./model-reply";
import { keepValidThinking, thinkingPrefixes } from "../core/thinking-guard";
import { interruptedCall, runToolStep, type PendingCall } from "./tool-step";

export type { PendingCall } from "./tool-step";
export type { CallBudget, DelegatedRun, DelegatedTask, DelegationParent, TurnDeps } from "./turn-deps";
import type { TurnDeps } from "./turn-deps";

/** Where a loop stands: enough to continue it later, in another request or another object instance. */
export interface LoopState {
  /** The next step to run. */
  step: number;
  usage: Usage;
  modelMs: number;
  modelCalls: number;
  /**
   * Steps the turn has taken, its sub-agents' included: what its shared bound has used. Absent in
   * a state saved before sub-agents counted; `step` stands in.
   */
  calls?: number;
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
  /** stopReason "max_iterations" at the turn's shared bound (deps.budget), before the loop's own. */
  turnBound?: true;
}

/** A max_tokens stop with the input this close to the window has no room to continue into. */
export const CONTEXT_FULL_MARGIN_TOKENS = 512;
/** Streams that fail mid-way are asked again at most this often per turn (the SDK retries HTTP errors twice). */
export const STREAM_RETRIES = 2;

const promptTokens = (u: Partial<Usage>) =>
  (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
/** Waits `ms`, or less: a stop (`signal`) ends the wait at once. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

export async function runAgentTurn(deps: TurnDeps, userContent: ContentBlock[]): Promise<TurnOutcome> {
  return continueTurn(deps, {
    from: { step: 0, usage: zeroUsage(), modelMs: 0, modelCalls: 0, calls: 0 },
    earlier: [],
    first: [{ role: "user", content: userContent }],
  });
}

/**
 * A paused turn's second half: the step's results, the server's and the client's in call order,
 * are saved as one message (a tool_use is never left without its answer), and the loop goes on.
 */
export async function resumeAgentTurn(
  deps: TurnDeps,
  resume: { paused: PausedStep; clientResults: readonly ToolResultBlock[]; turnMessages: readonly StoredMessage[] },
): Promise<TurnOutcome> {
  const { paused, clientResults, turnMessages } = resume;
  return continueTurn(deps, {
    from: paused.state,
    // The master's own messages, as a turn that never paused holds them: a sub-agent's thread,
    // saved in the same range of the transcript, is never its context.
    earlier: turnMessages.filter((m) => !m.agent),
    first: [{ role: "user", content: completeStep(paused, clientResults) }],
  });
}

/** The step's results in call order, each pending slot filled from the client's results by id. */
export function completeStep(paused: PausedStep, clientResults: readonly ToolResultBlock[]): ToolResultBlock[] {
  const byId = new Map(clientResults.map((r) => [r.tool_use_id, r]));
  let next = 0;
  return paused.results.map((r) => r ?? byId.get(paused.pending[next++].id)!);
}

/** The stop reason of a turn someone stopped. */
export const INTERRUPTED = "interrupted";

/** One model call's outcome: its reply; a cut-off partial saved, to be continued; a stop; or a failure that ends the turn. */
type CallOutcome =
  | { kind: "reply"; reply: Anthropic.Message; request: ModelRequest }
  | { kind: "continue" }
  | { kind: "stopped" }
  | { kind: "failed"; failure: ModelFailure };

async function continueTurn(
  deps: TurnDeps,
  at: { from: LoopState; earlier: readonly StoredMessage[]; first: NewMessage[] },
): Promise<TurnOutcome> {
  const { from, earlier, first } = at;
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
  let streamRetries = 0;
  /** Extra room after replies cut off with nothing but thinking (thinking counts against max_tokens). */
  let outputRoom = 1;
  let compactNext = false;
  // Shared with the sub-agents this loop delegates to: their calls and the master's use one bound.
  const budget = deps.budget ?? { limit: deps.maxIterations, used: from.calls ?? from.step };
  const state = (step: number): LoopState => ({ step, usage, modelMs, modelCalls, calls: budget.used });
  /** Adds what a call spent to the turn's usage, and tells the turn (deps.onUsage) at once. */
  const spend = (spent: Partial<Usage>) => {
    usage = addUsage(usage, spent);
    deps.onUsage?.(usage);
  };
  const active = () => deps.activeModel?.() ?? deps.model;
  /** After a compaction rewrote the turn, thinking whose prefix moved stays out. */
  const guard = (request: ModelRequest) => keepValidThinking(request, deps.knownThinking());

  const compact = async (request: ModelRequest, forced: boolean): Promise<ModelRequest> => {
    emit({
      type: "compaction_started",
      turnId,
      tokens: compactor!.effective(request),
      budgetTokens: compactor!.budgetTokens,
      forced,
    });
    const outcome = await compactor!.compact(request, turnMessages, { signal: deps.signal });
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
    spend(outcome.usage);
    deps.onCompaction?.(outcome, forced);
    return outcome.request;
  };

  /** The request as sent: thinking kept only where valid, with the room cut-off thinking asked for. */
  const sendable = (request: ModelRequest): ModelRequest => {
    const guarded = guard(request);
    return outputRoom > 1
      ? { ...guarded, max_tokens: Math.min(active().maxOutput, guarded.max_tokens * outputRoom) }
      : guarded;
  };
  /** The request sent last as it was before the guard: what a forced compaction works on. */
  let unguarded: ModelRequest | null = null;

  /** The step's request: built from the freshest state, compacted if due, thinking kept only where valid. */
  const nextRequest = async (): Promise<ModelRequest> => {
    let request = deps.buildRequest();
    if (compactor) {
      // The build's own guard judged thinking against the uncompacted prefix: start from before it.
      request = compactor.apply(beforeThinkingGuard(request));
      if (compactNext || compactor.due(guard(request))) request = await compact(request, compactNext);
      compactNext = false;
    }
    unguarded = request;
    return sendable(request);
  };

  /** Streams the call; retries what the API lets a client retry; saves a partial reply before it is lost. */
  const call = async (request: ModelRequest, step: number): Promise<CallOutcome> => {
    for (;;) {
      const started = Date.now();
      const streamed = await streamCall({ client: deps.client, request, turnId, emit, signal: deps.signal });
      modelMs += Date.now() - started;
      if (streamed.ok) return { kind: "reply", reply: streamed.reply, request };
      if (streamed.partial?.usage) spend(priced(partialUsage(streamed.partial, active()), active()));
      if (deps.signal?.aborted) {
        // Stopped: what was streamed is the reply, kept as it stands (never continued).
        deps.onRequest?.({ request, step, reportedTokens: null, compacted: compactor?.active ?? false });
        const partial = partialText(streamed.partial?.content);
        if (partial.length)
          await persist([{ role: "assistant", content: partial, model: request.model, stopReason: INTERRUPTED }]);
        return { kind: "stopped" };
      }
      const failure = describeModelError(streamed.error);
      // The estimate and the calibration both missed: compact regardless of the threshold and
      // retry, exactly once per turn.
      if (failure.type === "context_overflow" && compactor && !overflowRetried) {
        overflowRetried = true;
        if (failure.overflow)
          compactor.learnFromOverflow(request, failure.overflow.promptTokens, failure.overflow.maxTokens);
        unguarded = await compact({ ...(unguarded ?? request), max_tokens: request.max_tokens }, true);
        // Stopped during the compaction: no retry.
        if (deps.signal?.aborted) {
          deps.onRequest?.({ request, step, reportedTokens: null, compacted: compactor.active });
          return { kind: "stopped" };
        }
        request = guard(unguarded);
        continue;
      }
      deps.onRequest?.({ request, step, reportedTokens: null, compacted: compactor?.active ?? false });
      // Text already streamed is never lost: it is saved as the partial reply it is.
      const partial = partialText(streamed.partial?.content);
      if (partial.length)
        await persist([{ role: "assistant", content: partial, model: request.model, stopReason: "error" }]);
      if (!isRetryableStreamError(streamed.error) || streamRetries >= STREAM_RETRIES)
        return { kind: "failed", failure };
      const delayMs = (deps.retryDelayMs ?? retryDelayMs)(streamRetries);
      streamRetries++;
      emit({
        type: "retry",
        turnId,
        attempt: streamRetries,
        delayMs,
        error: { type: failure.providerType ?? "api_error", message: failure.message },
      });
      await sleep(delayMs, deps.signal);
      // Stopped during the backoff: no further call.
      if (deps.signal?.aborted) return { kind: "stopped" };
      // After a saved partial the next request continues it (core/replay-rules.ts); else the same request again.
      if (partial.length) return { kind: "continue" };
    }
  };

  const stopped = (): TurnOutcome => ({ stopReason: INTERRUPTED, usage, modelMs, modelCalls });
  for (let step = from.step; step < deps.maxIterations; step++) {
    if (deps.signal?.aborted) return stopped();
    // Taken before any await: parallel runs never count on the same call.
    if (budget.used >= budget.limit)
      return { stopReason: "max_iterations", usage, modelMs, modelCalls, turnBound: true };
    budget.used++;
    const request_ = await nextRequest();
    // Stopped during a compaction: the request goes unsent.
    if (deps.signal?.aborted) return stopped();
    const outcome = await call(request_, step);
    if (outcome.kind === "stopped") return stopped();
    if (outcome.kind === "failed") return { stopReason: "error", usage, modelMs, modelCalls, failure: outcome.failure };
    if (outcome.kind === "continue") continue;
    const { reply, request } = outcome;
    modelCalls++;
    // Priced at the model that answered (a fallback's prices after a refusal); a refusal before any
    // output is free in the categories the API does not bill.
    const replyUsage = billedUsage(reply, catalogEntry(reply.model) ?? active());
    spend(replyUsage);
    compactor?.calibrate(request, promptTokens(replyUsage));
    deps.onRequest?.({
      request,
      step,
      reportedTokens: promptTokens(replyUsage),
      compacted: compactor?.active ?? false,
    });

    const raw = storedBlocks(reply.content);
    const produced = coalesceBlocks(raw);
    // The prefixes are taken from the blocks as the API sent them: a dropped blank text or a withheld
    // secret input changes what is sent back, and the guard then sees the thinking after it moved.
    const prefixes = thinkingPrefixes(request, raw);
    const stop = reply.stop_reason ?? "end_turn";
    if (produced.length || stop === "refusal") {
      // Secret tool inputs (a PDF password) run below but are never stored: the transcript, the
      // replay, prompt snapshots and the cortex are all built from what is persisted here.
      const stored = produced.map((b) =>
        b.type === "tool_use" ? { ...b, input: deps.registry.withhold(b.name, b.input) } : b,
      );
      const content = stored.length ? stored : [{ type: "text" as const, text: refusalNote(reply) }];
      await persist([
        {
          role: "assistant",
          content,
          usage: replyUsage,
          model: reply.model,
          stopReason: stop,
          ...(prefixes ? { thinkingPrefixes: prefixes } : {}),
          ...betweenToolsMark(request, { content, model: active() }),
        },
      ]);
    }

    if (stop === "refusal") {
      const details = (reply as { stop_details?: { category?: string | null; explanation?: string | null } | null })
        .stop_details;
      const fallbackModel = (await deps.fallBack?.()) ?? null;
      emit({
        type: "refusal",
        turnId,
        model: reply.model,
        category: details?.category ?? null,
        explanation: details?.explanation ?? null,
        ...(fallbackModel ? { fallbackModel } : {}),
      });
      if (fallbackModel) continue;
      return { stopReason: "refusal", usage, modelMs, modelCalls };
    }
    // A long server-tool turn paused: the reply, resent as the last message, lets the model go on.
    if (stop === "pause_turn") continue;
    if (stop === "max_tokens" || stop === "model_context_window_exceeded") {
      // Cut off: continue it, unless the input already fills the window and nothing can make room
      // (a compaction may, once): the loop would only spin.
      const full =
        promptTokens(replyUsage) >=
        Math.min(deps.contextWindowTokens, active().contextWindow) - CONTEXT_FULL_MARGIN_TOKENS;
      // (A pass that cut nothing, standing in for nothing, would free nothing the next time either.)
      const canCompact = !!compactor && !compactor.active && !compactor.fruitless;
      // Its tool calls are never run (a cut call's input may be incomplete): each is answered at once
      // as not run, so none is left unanswered, and the model makes it again with more room.
      const cutCalls = produced.filter((b) => b.type === "tool_use");
      if (cutCalls.length)
        await persist([
          { role: "user", content: cutCalls.map((b) => interruptedCall(deps, b, { content: cutCallNotRun(stop) })) },
        ]);
      if (full && !canCompact) return { stopReason: "context_full", usage, modelMs, modelCalls };
      if ((full || stop === "model_context_window_exceeded") && canCompact) compactNext = true;
      // Nothing but thinking, or a call cut off: the docs' remedy is more room (thinking counts against max_tokens).
      if (cutCalls.length || !produced.some((b) => b.type === "text")) outputRoom = Math.min(outputRoom * 2, 8);
      continue;
    }
    if (stop !== "tool_use") return { stopReason: stop, usage, modelMs, modelCalls };
    if (deps.signal?.aborted) {
      // Stopped before the calls ran: each is answered as interrupted, so none is left unanswered.
      // Each told as every call and result is: its tool_use, then its tool_result.
      await persist([
        {
          role: "user",
          content: produced.flatMap((b) => (b.type === "tool_use" ? [interruptedCall(deps, b)] : [])),
        },
      ]);
      return stopped();
    }
    const delegate = deps.delegate;
    const step_ = await runToolStep(
      // A delegated run's calls count against this turn's bound (its own 12 aside).
      delegate ? { ...deps, delegate: (task, parent) => delegate(task, { ...parent, budget }) } : deps,
      {
        content: produced,
        request,
        onDelegated: (run) => {
          spend(run.usage);
          modelMs += run.modelMs;
        },
      },
    );
    if (step_.pending.length)
      return {
        stopReason: "requires_action",
        usage,
        modelMs,
        modelCalls,
        paused: { state: state(step + 1), results: step_.results, pending: step_.pending },
      };
    if (!step_.results.length) return { stopReason: stop, usage, modelMs, modelCalls };
    await persist([{ role: "user", content: step_.results as ToolResultBlock[] }]);
    // Stopped while the tools ran: what they returned is saved, and no further model call is made.
    if (deps.signal?.aborted) return stopped();
  }
  return { stopReason: "max_iterations", usage, modelMs, modelCalls };
}

/** The result of a call in a reply cut off before it finished (`stop`): never run, and the model asked to make it again. */
export const cutCallNotRun = (stop: string) =>
  `not run: your reply was cut off at ${stop} before it finished, so this call may be incomplete; make the call again`;

/** What the record keeps of a refusal that came before any output. */
function refusalNote(reply: Anthropic.Message): string {
  const details = (reply as { stop_details?: { category?: string | null } | null }).stop_details;
  return `[refused: ${reply.model} declined to answer${details?.category ? ` (category: ${details.category})` : ""}; this turn is not replayed to the model]`;
}

/** The effort a between_tools reply with thinking ran at, as its stored mark (else nothing). */
function betweenToolsMark(
  request: ModelRequest,
  reply: { content: readonly ContentBlock[]; model: ModelEntry },
): { betweenToolsEffort?: string } {
  if (request.thinking?.type !== "between_tools" || !reply.content.some(isThinkingBlock)) return {};
  const effort = request.output_config?.effort ?? reply.model.effort?.default;
  return effort ? { betweenToolsEffort: effort } : {};
}
