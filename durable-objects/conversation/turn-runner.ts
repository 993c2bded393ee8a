// Running one turn: the model client, the prompt context, the agent loop with its tools, compactor
// and sub-agents; every event to the caller, the sockets and the lifecycle log; housekeeping after.
import type Anthropic from "@anthropic-ai/sdk";
import type { TurnEvent } from "../../core/events";
import { createModelClient } from "../../core/model-client";
import { ModelNotConfiguredError } from "../../core/model-provider";
import { zeroUsage, type ContentBlock, type NewMessage } from "../../core/types";
import type { BlockOrigin } from "../../core/compactor";
import { runSubAgent } from "../../agent/sub-agent";
import { blockOrigins, TurnCompactor } from "../../agent/turn-compaction";
import { runAgentTurn } from "../../agent/turn-loop";
import type { ConversationRef } from "../../services/record/conversation-head";
import { ConversationGone } from "./conversation-delete";
import type { FoldCoordinator } from "./fold-coordinator";
import type { IndexOutbox } from "./index-outbox";
import type { LifecycleLog } from "./lifecycle-log";
import type { ObjectScope } from "./object-scope";
import type { ConversationRecord } from "./record";
import type { PromptContext, ReplayCache } from "./replay-cache";
import { toolContextFor, type ReadOwn } from "./tool-context";
import type { TurnInput, TurnSink } from "./turn-intake";

export interface TurnRunnerParts {
  scope: ObjectScope;
  record: ConversationRecord;
  cache: ReplayCache;
  log: LifecycleLog;
  outbox: IndexOutbox;
  fold: FoldCoordinator;
  /** Every event of the turn to every socket of the conversation. */
  broadcast(event: TurnEvent): void;
  readOwn: ReadOwn;
}

export class TurnRunner {
  constructor(private readonly parts: TurnRunnerParts) {}

  /** Runs inside the turn chain (see TurnOrder): the only place a turn's messages are appended. */
  async run(ref: ConversationRef, input: TurnInput, sink: TurnSink | null, queuedAt: number, turnId: string): Promise<void> {
    const { scope, record, cache, log, broadcast } = this.parts;
    const started = Date.now();
    const emit = (event: TurnEvent) => {
      sink?.(event);
      broadcast(event);
      log.observe(ref, event);
    };
    /** Ends a turn that the model never answered, naming why. */
    const endWithError = (error: { type: string; message: string; status?: number }) => {
      emit({ type: "error", turnId, error });
      emit({ type: "turn_end", turnId, stop_reason: "error", usage: zeroUsage(), timing: { serverMs: Date.now() - started, modelMs: 0, queuedMs: started - queuedAt } });
    };
    emit({ type: "turn_start", turnId });
    const head = await record.load(ref);
    if (!head) {
      emit({ type: "error", turnId, error: { type: "not_found", message: "conversation not found" } });
      return;
    }
    let client: Anthropic;
    try {
      client = createModelClient(scope.env);
    } catch (err) {
      // No model to answer: refused before anything is saved, never answered by a stand-in.
      if (!(err instanceof ModelNotConfiguredError)) throw err;
      endWithError({ type: err.type, message: err.message, status: err.status });
      return;
    }
    let prompt: PromptContext;
    try {
      prompt = await cache.promptContext(head);
    } catch (err) {
      // D1 unavailable before anything was saved: the turn is refused whole, and the caller told.
      console.error("turn refused: prompt context unavailable", err);
      endWithError({ type: "storage_error", message: "the turn could not start; nothing was saved; retry" });
      return;
    }
    if (input.activate?.length) await record.activateTools(input.activate, prompt.tools);
    const toolContext = toolContextFor({ scope, record, ref, projectTools: prompt.projectTools, readOwn: this.parts.readOwn, progress: (message) => broadcast({ type: "progress", turnId, message }) });
    const persist = async (messages: NewMessage[]) => {
      const stored = await record.append(messages);
      for (const message of stored) emit({ type: "message", turnId, message });
      return stored;
    };
    const compactorFor = (originOf: () => (block: ContentBlock) => BlockOrigin | undefined) => new TurnCompactor(head.settings, client, head.settings.model, originOf);
    let outcome;
    try {
      outcome = await runAgentTurn(
        {
          turnId,
          client,
          registry: prompt.tools,
          toolContext,
          maxIterations: head.settings.maxToolIterations,
          contextWindowTokens: head.settings.contextWindowTokens,
          compactor: compactorFor(() => blockOrigins(head.id, cache.replaySource(record.head ?? head))),
          buildRequest: () => cache.buildRequest(record.head ?? head, prompt).request,
          onRequest: (request, step, reportedTokens, compacted) => log.snapshotPrompt(head, turnId, step, request, reportedTokens, compacted),
          persist,
          emit,
          // Workflow mode: the sub-agent runs this same loop with its own safety net.
          delegate: (task, parent) =>
            runSubAgent({ client, registry: prompt.tools, toolContext, contextWindowTokens: head.settings.contextWindowTokens, persist, compactor: compactorFor }, task, parent),
        },
        input.content,
      );
    } catch (err) {
      // Storage failed: whatever was appended before stays; the caller is told. Or the
      // conversation was deleted under the turn: nothing more of it is written.
      if (!(err instanceof ConversationGone)) console.error("turn failed", err);
      endWithError(err instanceof ConversationGone ? { type: "not_found", message: "conversation not found" } : { type: "storage_error", message: "the turn could not be saved; retry" });
      return;
    }
    if (outcome.failure) emit({ type: "error", turnId, error: outcome.failure });
    const serverMs = Date.now() - started - outcome.modelMs;
    emit({ type: "turn_end", turnId, stop_reason: outcome.stopReason, usage: outcome.usage, timing: { serverMs, modelMs: outcome.modelMs, queuedMs: started - queuedAt } });
    // Housekeeping after the response: never on the turn's critical path.
    scope.ctx.waitUntil(this.parts.outbox.pending());
    scope.ctx.waitUntil(this.parts.fold.maybeDispatch());
  }
}
