// Running one turn: the model client, the prompt context, the agent loop with its tools, compactor
// and sub-agents; every event to the caller, the sockets and the lifecycle log; housekeeping after.
// A turn that pauses on client tools is kept by PausedTurns and continued here, under the same
// turnId, when the client's results come in or its wait runs out.
import type Anthropic from "@anthropic-ai/sdk";
import { withAliases, type TurnEvent } from "../../core/events";
import { createModelClient } from "../../core/model-client";
import { ModelNotConfiguredError } from "../../core/model-provider";
import { DEFAULT_SETTINGS, sameModel, settingsAfterModelChange } from "../../core/settings";
import { resolveTurnModel } from "../../services/models/resolve";
import { zeroUsage, type ContentBlock, type NewMessage, type StoredMessage } from "../../core/types";
import { knownThinking } from "../../core/thinking-guard";
import type { BlockOrigin } from "../../core/compactor";
import type { ClientToolSpec } from "../../core/client-tools";
import { TURN_TOOL_RESULT_CHARS, TurnResultBudget } from "../../core/tool-result-limits";
import { runSubAgent } from "../../agent/sub-agent";
import { clientToolDefinition } from "../../agent/tools/client-tool";
import { blockOrigins, carriedCount, TurnCompactor } from "../../agent/turn-compaction";
import {
  completeStep,
  INTERRUPTED,
  resumeAgentTurn,
  runAgentTurn,
  type TurnDeps,
  type TurnOutcome,
} from "../../agent/turn-loop";
import type { ConversationRef } from "../../services/record/conversation-head";
import { ConversationGone } from "./conversation-delete";
import type { AutoTitler } from "./auto-title";
import type { FoldCoordinator } from "./fold-coordinator";
import type { IndexOutbox } from "./index-outbox";
import type { LifecycleLog } from "./lifecycle-log";
import type { ObjectScope } from "./object-scope";
import { interruptedResults, pausedMessage, type PausedTurn, type PausedTurns } from "./paused-turn";
import type { ConversationRecord } from "./record";
import type { PromptContext, ReplayCache } from "./replay-cache";
import { forgetRefusedNotes, regenerateState, regenerateTarget, regeneratingPersist } from "./regenerate";
import { toolContextFor, type ReadOwn, TurnWrites } from "./tool-context";
import type { TurnInput, TurnSink } from "./turn-input";
import { TurnSpending } from "./turn-spending";

export interface TurnRunnerParts {
  scope: ObjectScope;
  record: ConversationRecord;
  cache: ReplayCache;
  log: LifecycleLog;
  outbox: IndexOutbox;
  fold: FoldCoordinator;
  paused: PausedTurns;
  /** The automatic title after the first exchange (auto-title.ts). */
  titler: AutoTitler;
  /** Every event of the turn to every socket of the conversation. */
  broadcast(event: TurnEvent): void;
  /** Closes the sockets whose key is revoked or expired: awaited before a turn's first event. */
  closeRevokedSockets(): Promise<void>;
  readOwn: ReadOwn;
}

/** The error a new turn gets while an earlier one waits on client tools (answered as 409). */
export const TURN_PAUSED = "turn_paused";

type Error_ = { type: string; message: string; status?: number };
/** A turn the intake hands over to run. */
type TurnCall = { ref: ConversationRef; input: TurnInput; sink: TurnSink | null; queuedAt: number; turnId: string };
/** `earlier`: a continued turn's messages saved so far, as the replay tail holds them. */
type Loop = (deps: TurnDeps, at: { writes: TurnWrites; earlier: StoredMessage[] }) => Promise<TurnOutcome>;

export class TurnRunner {
  /** The tool-result chars one turn may store (core/tool-result-limits.ts); a test sets a small one. */
  resultBudgetChars = TURN_TOOL_RESULT_CHARS;
  constructor(private readonly parts: TurnRunnerParts) {}

  /** Runs inside the turn chain (see TurnOrder): the only place a turn's messages are appended. */
  async run(turn: TurnCall): Promise<void> {
    const { ref, input, sink, queuedAt, turnId } = turn;
    await this.parts.closeRevokedSockets();
    const waiting = await this.parts.paused.get();
    if (waiting) {
      // Queued before the previous turn paused: refused like a request that arrives while it waits.
      const refusal = { type: TURN_PAUSED, message: pausedMessage(waiting), status: 409 };
      return this.begin({ ref, sink, queuedAt, turnId }).fail(refusal);
    }
    const turnTools = input.tools ?? [];
    if (input.regenerate) return this.regenerate({ ref, input, sink, queuedAt, turnId });
    await this.execute({
      ref,
      sink,
      queuedAt,
      turnId,
      turnTools,
      activate: input.activate,
      loop: async (deps) => runAgentTurn({ ...deps, signal: input.signal }, input.content),
    });
  }

  /**
   * The last prompt runs again as this turn; once its copy is saved, the exchange it replaces is
   * marked superseded, before the first model request is built. Checked again here, in the turn
   * chain: the state the caller was admitted on may have moved.
   */
  private async regenerate(turn: TurnCall): Promise<void> {
    const { ref, input, sink, queuedAt, turnId } = turn;
    const { scope, record, cache, broadcast } = this.parts;
    const head = await record.load(ref);
    if (!head)
      return this.begin({ ref, sink, queuedAt, turnId }).fail({ type: "not_found", message: "conversation not found" });
    await record.settle();
    const target = regenerateTarget(head, cache.replaySource(head), regenerateState(scope.store, 0));
    if (target.kind === "refused") return this.begin({ ref, sink, queuedAt, turnId }).fail(target.refusal);
    const announce = (event: TurnEvent) => {
      sink?.(event);
      broadcast(event);
    };
    await this.execute({
      ref,
      sink,
      queuedAt,
      turnId,
      turnTools: input.tools ?? [],
      loop: async (deps, { writes }) => {
        const notes = { scope: writes.noteScope(), record, ref, target, turnId, announce };
        const persist = regeneratingPersist(deps.persist, notes);
        return runAgentTurn({ ...deps, persist, signal: input.signal }, target.prompt.content);
      },
    });
  }

  /**
   * Continues the paused turn `turnId` in the turn chain: with the client's results once all are in,
   * or, when its wait ran out or a stop ended it (`abandon`), by closing the pending calls as
   * interrupted (a tool_use is never left unanswered) and ending it without another model call.
   * False, with no event, when it no longer waits: the intake tells the caller how it ended.
   */
  async resume(call: {
    ref: ConversationRef;
    turnId: string;
    sink: TurnSink | null;
    queuedAt: number;
    signal?: AbortSignal | undefined;
    abandon?: boolean;
  }): Promise<false | undefined> {
    const { ref, sink, queuedAt, signal, abandon = false } = call;
    const { paused, record, cache } = this.parts;
    const turn = await paused.get();
    if (turn?.turnId !== call.turnId) return false;
    await this.parts.closeRevokedSockets();
    if (this.stepAlreadySaved(turn)) {
      // A crash came between saving the step's results (R2 first, then the index) and clearing the
      // pause: they are in the transcript, so they are never saved twice. The pause is cleared and
      // the turn ends here; the next turn goes on from the saved results.
      const { emit, end } = this.begin({ ref, sink, queuedAt, turnId: turn.turnId });
      await paused.resumed(turn, abandon);
      await this.savedDeferredNotes(emit, turn.turnId);
      end("interrupted", turn.step.state.usage, 0);
      return;
    }
    // Ended without another model call: a stop (with the client's results, when they are in), or
    // the wait ran out (its calls closed as interrupted).
    if (!turn.answers || abandon) {
      if (!abandon && turn.expiresAt > Date.now()) return;
      const { emit, end } = this.begin({ ref, sink, queuedAt, turnId: turn.turnId });
      const results = turn.answers ?? interruptedResults(turn.step, { emit, turnId: turn.turnId });
      const budget = new TurnResultBudget(this.resultBudgetChars, cache.turnMessages(record.head, turn.firstSeq));
      try {
        for (const m of await record.append(budget.fit([{ role: "user", content: completeStep(turn.step, results) }])))
          emit({ type: "message", turnId: turn.turnId, message: m });
      } catch (err) {
        // A deleted conversation takes nothing more. Any other failure leaves the wait in storage,
        // and the alarm (retried when it throws) tries again.
        if (err instanceof ConversationGone) return;
        throw err;
      }
      await paused.resumed(turn, abandon);
      await this.savedDeferredNotes(emit, turn.turnId);
      end(abandon ? "interrupted" : "client_tool_timeout", turn.step.state.usage, 0);
      this.parts.scope.ctx.waitUntil(this.parts.outbox.pending());
      return;
    }
    await this.execute({
      ref,
      sink,
      queuedAt,
      turnId: turn.turnId,
      turnTools: turn.turnTools,
      loop: (deps, { earlier }) =>
        resumeAgentTurn(
          { ...deps, signal },
          { paused: turn.step, clientResults: turn.answers!, turnMessages: earlier },
        ),
      resuming: turn,
    });
  }

  /** A turn that must wait behind others: its id reaches the caller and the sockets now, so a stop can name it. */
  queued(sink: TurnSink | null, turnId: string, ahead: number): void {
    const event: TurnEvent = { type: "turn_queued", turnId, ahead };
    sink?.(event);
    this.parts.broadcast(event);
  }

  /**
   * A turn stopped while still queued: it ends "interrupted" without running. Nothing of it is
   * saved (its user message never joined the conversation) and no model is called.
   */
  cancelled(turn: { ref: ConversationRef; sink: TurnSink | null; queuedAt: number; turnId: string }): void {
    this.begin(turn).end(INTERRUPTED, zeroUsage(), 0);
  }

  /** Whether the last saved message already answers the paused step (its first pending call). */
  private stepAlreadySaved(turn: PausedTurn): boolean {
    const { store } = this.parts.scope;
    const id = turn.step.pending[0]?.id;
    const last = store.lastSeq() > 0 ? store.range(store.lastSeq(), store.lastSeq())[0] : undefined;
    return (
      !!id &&
      last?.role === "user" &&
      Array.isArray(last.content) &&
      last.content.some((b) => b.type === "tool_result" && b.tool_use_id === id)
    );
  }

  /**
   * The turn's event plumbing: to the caller, the sockets and the log; `fail` ends a turn the model
   * never answered. Callers and sockets get each event with its rule-named twin (core/events.ts).
   */
  private begin(turn: { ref: ConversationRef; sink: TurnSink | null; queuedAt: number; turnId: string }) {
    const { ref, sink, queuedAt, turnId } = turn;
    const { log, broadcast } = this.parts;
    const started = Date.now();
    const writes = new TurnWrites(this.parts.scope);
    const emit = (event: TurnEvent) => {
      for (const sent of withAliases(event)) {
        sink?.(sent);
        broadcast(sent);
      }
      log.observe(ref, event);
    };
    emit({ type: "turn_start", turnId });
    const end = (stopReason: string, usage: TurnOutcome["usage"], modelMs: number) =>
      emit({
        type: "turn_end",
        turnId,
        stop_reason: stopReason,
        usage,
        timing: { serverMs: Date.now() - started - modelMs, modelMs, queuedMs: started - queuedAt },
        // Where the turn's note writes reached: its caller's answer covers them (workers/chat/turns.ts).
        ...writes.reached(),
      });
    /** The turn ends in `error`, with what its model calls spent before it failed (none: nothing). */
    const fail = (error: Error_, spent = zeroUsage()) => {
      emit({ type: "error", turnId, error });
      end("error", spent, 0);
    };
    return { emit, end, fail, writes };
  }

  private async execute(turn: {
    ref: ConversationRef;
    sink: TurnSink | null;
    queuedAt: number;
    turnId: string;
    turnTools: readonly ClientToolSpec[];
    /** Tools the turn's attached files need. */
    activate?: readonly string[];
    loop: Loop;
    /** The paused turn this run continues. */
    resuming?: PausedTurn;
  }): Promise<void> {
    const { ref, sink, queuedAt, turnId, turnTools, activate, loop, resuming } = turn;
    const { scope, record, cache, log, broadcast, paused } = this.parts;
    const { emit, end, fail, writes } = this.begin({ ref, sink, queuedAt, turnId });
    const head = await record.load(ref);
    // Every way out ends the turn (error, then turn_end): a client never waits on a turn that stopped.
    if (!head) return fail({ type: "not_found", message: "conversation not found" });
    // A write before the model loop failed (the head's R2 write past its retries) or the
    // conversation went: nothing of the turn is saved.
    const unstarted = (err: unknown) => {
      if (err instanceof ConversationGone) return fail({ type: "not_found", message: "conversation not found" });
      console.error("turn refused: a write before the model loop failed", err);
      // A continuation keeps the results it was posted with: the alarm tries it again shortly.
      const message = resuming
        ? "the turn could not continue yet; the results posted are kept and it is tried again shortly"
        : "the turn could not start; nothing was saved; retry";
      return fail({ type: "storage_error", message });
    };
    let client: Anthropic;
    try {
      client = createModelClient(scope.env);
    } catch (err) {
      // No model to answer: refused before anything is saved, never answered by a stand-in.
      if (!(err instanceof ModelNotConfiguredError)) throw err;
      return fail({ type: err.type, message: err.message, status: err.status });
    }
    // A retired model moves the conversation to its replacement (settings follow, event, log line).
    const model = await resolveTurnModel(scope.env, head.settings.model, client);
    if (!model.ok)
      return fail({
        type: "model_unavailable",
        message: `settings.model: ${model.message}`,
        status: model.transient ? 503 : 400,
      });
    if (model.movedFrom) {
      const moved = await record.moveToModel(model.entry, model.movedFrom.id).catch((err: unknown) => ({ err }));
      if (typeof moved === "object") return unstarted(moved.err);
      // A model a PATCH chose meanwhile was kept: no move to announce.
      if (moved)
        emit({
          type: "model_changed",
          turnId,
          from: model.movedFrom.id,
          to: model.entry.id,
          reason: "retired",
          retiredOn: model.movedFrom.retiredOn,
        });
    }
    let prompt: PromptContext;
    try {
      prompt = await cache.promptContext(record.head ?? head, model.entry);
    } catch (err) {
      // D1 unavailable before anything was saved: the turn is refused whole, and the caller told.
      return unstarted(err);
    }
    const clash = turnTools.filter((t) => prompt.tools.get(t.name)).map((t) => t.name);
    // A new turn is refused whole; a paused one goes on with its own tools, which win over tenant
    // tools of the same name registered while it waited (refusing it would leave it waiting).
    if (clash.length && !resuming)
      return fail({
        type: "invalid_request",
        message: `tools: ${clash.join(", ")} already registered for this tenant`,
        status: 400,
      });
    if (clash.length) prompt = { ...prompt, tools: prompt.tools.without(clash) };
    // The turn's own client tools ride its requests as core tools; the <capabilities> index was
    // taken from the registry before them, so they never move the prompt's prefix.
    if (turnTools.length)
      prompt = { ...prompt, tools: prompt.tools.extend(turnTools.map((t) => clientToolDefinition(t, { core: true }))) };
    try {
      if (activate?.length) await record.activateTools(activate, prompt.tools);
      // Notes a failed save after a paused step's results kept join before this turn's message, as attachment notes.
      if (!resuming) await this.savedDeferredNotes(broadcast, "attachment");
    } catch (err) {
      return unstarted(err);
    }
    const toolContext = toolContextFor({
      scope,
      record,
      ref,
      projectTools: prompt.projectTools,
      readOwn: this.parts.readOwn,
      writes,
      progress: (message) => broadcast({ type: "progress", turnId, message }),
    });
    let firstSeq = resuming?.firstSeq ?? 0;
    let open = resuming;
    // The turn's messages so far from the replay tail (held once), and what its results may yet store.
    const earlier = resuming ? cache.turnMessages(record.head ?? head, resuming.firstSeq) : [];
    const budget = new TurnResultBudget(this.resultBudgetChars, earlier);
    const persist = async (messages: NewMessage[]) => {
      const stored = await record.append(budget.fit(messages));
      firstSeq ||= stored[0]?.seq ?? 0;
      for (const message of stored) emit({ type: "message", turnId, message });
      // The paused step's results are saved: from here on the turn is running again, not waiting.
      if (open) {
        await paused.resumed(open);
        open = undefined;
        await this.savedDeferredNotes(emit, turnId);
      }
      return stored;
    };
    const settings = (record.head ?? head).settings;
    const compactorFor = (originOf: () => (block: ContentBlock) => BlockOrigin | undefined) =>
      new TurnCompactor(settings, client, () => prompt.model, originOf);
    // After a refusal the settings' fallback model answers the rest of the turn, once.
    let fallback = settings.refusalFallbackModel;
    const fallBack = async (): Promise<string | null> => {
      if (!fallback) return null;
      const resolved = await resolveTurnModel(scope.env, fallback, client);
      fallback = null;
      if (!resolved.ok) return null;
      emit({ type: "model_changed", turnId, from: prompt.model.id, to: resolved.entry.id, reason: "refusal_fallback" });
      prompt = { ...prompt, model: resolved.entry };
      return resolved.entry.id;
    };
    // A turn paused after its fallback took over goes on with it, or waits: never back on the refuser.
    const resumedOn = resuming?.model ? await resolveTurnModel(scope.env, resuming.model, client) : null;
    if (resumedOn && !resumedOn.ok) {
      const message = `the refusal fallback this turn went on with: ${resumedOn.message}; the results posted are kept`;
      return fail({ type: "model_unavailable", message, status: resumedOn.transient ? 503 : 400 });
    }
    if (resumedOn) [fallback, prompt] = [null, { ...prompt, model: resumedOn.entry }];
    // A fallback model gets the conversation's settings as a model change would leave them: thinking,
    // effort and the output reserve it would refuse are brought within what it takes.
    const requestSettings = () => {
      const now = (record.head ?? head).settings;
      return sameModel(prompt.model.id, now.model)
        ? now
        : settingsAfterModelChange(now, { patch: { model: prompt.model.id }, from: model.entry, to: prompt.model });
    };
    // The ledger gets the turn's usage through the outbox, once: after the answer, or, when the turn
    // throws after its model calls, what they had spent by then; a row per model that spent.
    const spending = new TurnSpending({
      before: resuming?.step.state.usage ?? zeroUsage(),
      key: `${turnId}${resuming ? `:${resuming.step.state.step}` : ""}`,
      where: { tenantId: head.tenantId, conversationId: head.id },
      store: scope.store,
      outbox: this.parts.outbox,
      model: () => prompt.model,
    });
    let outcome: TurnOutcome;
    try {
      outcome = await loop(
        {
          turnId,
          client,
          registry: prompt.tools,
          toolContext,
          maxIterations: settings.maxToolIterations,
          contextWindowTokens: settings.contextWindowTokens,
          model: model.entry,
          activeModel: () => prompt.model,
          // Its first call is calibrated by the conversation's last (the provider's count for it).
          compactor: compactorFor(() => blockOrigins(head.id, cache.replaySource(record.head ?? head))).seeded(
            carriedCount(scope.store.snapshots(1)[0], cache.replaySource(record.head ?? head), prompt.model),
          ),
          buildRequest: () =>
            cache.buildRequest({ ...(record.head ?? head), settings: requestSettings() }, prompt).request,
          knownThinking: () => knownThinking(cache.replaySource(record.head ?? head)),
          fallBack,
          onRequest: (sent) => log.snapshotPrompt({ head: record.head ?? head, turnId, ...sent }),
          persist,
          emit,
          pauseForClient: true,
          // Kept as it grows: an object that dies before its meter is metered at its next start.
          onUsage: (total) => spending.report(total),
          // Workflow mode: the sub-agent runs this same loop with its own safety net.
          delegate: (task, parent) =>
            runSubAgent(
              {
                client,
                model: prompt.model,
                registry: prompt.tools,
                toolContext,
                contextWindowTokens: settings.contextWindowTokens,
                persist,
                compactor: compactorFor,
              },
              task,
              spending.delegation(parent),
            ),
        },
        { writes, earlier },
      );
    } catch (err) {
      // Storage failed: whatever was appended before stays; the caller is told. Or the
      // conversation was deleted under the turn: nothing more of it is written.
      // Its model calls were billed, the conversation gone or not: the ledger and the answer say so.
      spending.meter(spending.total);
      const gone = err instanceof ConversationGone;
      if (!gone) {
        console.error("turn failed", err);
        scope.ctx.waitUntil(this.parts.outbox.pending());
      }
      const message = gone ? "conversation not found" : "the turn could not be saved; retry";
      return fail({ type: gone ? "not_found" : "storage_error", message }, spending.total);
    }
    if (outcome.paused) {
      const waitMs = (head.settings.clientToolTimeoutSeconds ?? DEFAULT_SETTINGS.clientToolTimeoutSeconds) * 1000;
      const expiresAt = Date.now() + waitMs;
      const waiting: PausedTurn = { ref, turnId, step: outcome.paused, turnTools: [...turnTools], firstSeq, expiresAt };
      // After a refusal's fallback took over, the rest of the turn is the fallback's too.
      if (prompt.model.id !== model.entry.id) waiting.model = prompt.model.id;
      // Not stored: its calls stay unanswered, and the next turn's replay answers them interrupted.
      if (!(await paused.pauseAndAsk(waiting, emit))) {
        spending.meter(outcome.usage);
        const error = { type: "storage_error", message: "the turn could not wait for its client tools; retry" };
        return fail(error, outcome.usage);
      }
    }
    if (outcome.failure) emit({ type: "error", turnId, error: outcome.failure });
    // A turn /replay leaves out whole (refused, with no fallback answer): its notes go before its end is told.
    if (!outcome.paused) await forgetRefusedNotes(writes.noteScope(), ref, firstSeq);
    end(outcome.stopReason, outcome.usage, outcome.modelMs);
    spending.meter(outcome.usage);
    // Housekeeping after the response: never on the turn's critical path.
    scope.ctx.waitUntil(this.parts.outbox.pending());
    scope.ctx.waitUntil(this.parts.fold.maybeDispatch());
    // The title is a call of the conversation's model, never of a refusal's fallback.
    if (!outcome.paused) scope.ctx.waitUntil(this.parts.titler.afterTurn(client, model.entry));
  }

  /** Attachment notes that arrived during the pause join now, after the step's results (or a later turn's start). */
  private async savedDeferredNotes(emit: (e: TurnEvent) => void, turnId: string): Promise<void> {
    for (const message of await this.parts.paused.saveNotes(this.parts)) emit({ type: "message", turnId, message });
  }
}
