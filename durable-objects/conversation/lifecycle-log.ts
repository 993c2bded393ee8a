// Observing the lifecycle: each model request's size (prompt snapshots, their bodies in R2),
// compaction cards in the timeline, and compaction events in the corpus log.
import { contentFingerprint } from "../../core/compactor";
import { estimateRequest } from "../../core/replay";
import type { TurnEvent } from "../../core/events";
import type { ModelRequest } from "../../core/types";
import { logCorpusEvent } from "../../services/corpus";
import type { ConversationHead, ConversationRef } from "../../services/record/conversation-head";
import { promptSnapshotKey } from "../../r2-layout";
import { withRetry } from "../../services/record/retry";
import type { PromptSnapshot, TimelineCard } from "./conversation-store";
import type { ObjectScope } from "./object-scope";

type CompactionEvent = Extract<TurnEvent, { type: "compaction_started" | "compaction" }>;

export class LifecycleLog {
  constructor(private readonly scope: ObjectScope) {}

  /** Sees every turn event; compactions, model changes and refusals are kept. */
  observe(ref: ConversationRef, event: TurnEvent): void {
    if (event.type === "compaction_started" || event.type === "compaction")
      this.scope.ctx.waitUntil(this.logCompaction(ref, event));
    // The finished card stays in the conversation's timeline for History; it is never replayed. A
    // pass that could cut nothing changed nothing: no card (its corpus line says it was skipped).
    if (event.type === "compaction" && event.targets > 0) this.scope.store.addCard("compaction", event);
    if (event.type === "model_changed" || event.type === "refusal") {
      const { type, turnId, agent: _agent, ...fields } = event;
      const name = type === "model_changed" ? "model.changed" : "model.refused";
      // The corpus holds ids and sizes, never content: a refusal's explanation is the model's own
      // words about the request, so its line gives only their length.
      const logged =
        "explanation" in fields
          ? (({ explanation, ...rest }) => ({ ...rest, explanationChars: explanation?.length ?? 0 }))(fields)
          : fields;
      this.scope.ctx.waitUntil(
        logCorpusEvent(this.scope.env, {
          tenantId: ref.tenantId,
          event: name,
          fields: {
            conversation: ref.conversationId,
            turn: turnId,
            ...logged,
          },
        }).catch((err) => console.error("corpus log failed", err)),
      );
      if (type === "model_changed") this.scope.store.addCard("model_changed", event);
    }
  }

  private async logCompaction(ref: ConversationRef, event: CompactionEvent): Promise<void> {
    const { type, turnId, ...fields } = event;
    const name =
      event.type === "compaction"
        ? event.targets > 0
          ? "compaction.applied"
          : "compaction.skipped"
        : "compaction.started";
    const details = event.type === "compaction" ? { ...fields, details: `${event.details.length} targets` } : fields;
    await logCorpusEvent(this.scope.env, {
      tenantId: ref.tenantId,
      event: name,
      fields: {
        conversation: ref.conversationId,
        turn: turnId,
        ...details,
      },
    }).catch((err) => console.error("corpus log failed", err));
  }

  /** Each request's size against the budget (the newest 50, rotating); the body goes to R2. */
  snapshotPrompt(snapshot: {
    head: ConversationHead;
    turnId: string;
    step: number;
    request: ModelRequest;
    reportedTokens: number | null;
    compacted: boolean;
  }): void {
    const { head, turnId, step, request, reportedTokens, compacted } = snapshot;
    const estimate = estimateRequest(request, head.settings);
    const { id, dropped } = this.scope.store.addSnapshot({
      at: new Date().toISOString(),
      turnId,
      step,
      messages: request.messages.length,
      chars: estimate.chars,
      estimateTokens: estimate.tokens,
      reportedTokens,
      budgetTokens: estimate.budgetTokens,
      compacted,
      prefix: reportedTokens === null ? null : contentFingerprint(request.messages),
    });
    this.scope.ctx.waitUntil(
      this.scope.deletion
        .guard(async () => {
          const bucket = this.scope.env.BUCKET;
          try {
            await bucket.put(promptSnapshotKey(head.tenantId, head.id, id), JSON.stringify(request), {
              httpMetadata: { contentType: "application/json" },
            });
          } finally {
            // The dropped rows are already gone from SQLite: their bodies go whatever became of
            // the put, or nothing would ever list or delete them again.
            const keys = dropped.map((d) => promptSnapshotKey(head.tenantId, head.id, d));
            if (keys.length) await withRetry("prompt snapshot drop", () => bucket.delete(keys));
          }
        })
        .catch((err) => console.error("prompt snapshot write failed", err)),
    );
  }

  timeline(after: number, limit: number): { cards: TimelineCard[]; next: number | null } {
    const cards = this.scope.store.cards(after, limit + 1);
    const page = cards.slice(0, limit);
    return { cards: page, next: cards.length > limit ? page[page.length - 1].id : null };
  }

  /** Newest first; `before` is the id of the last snapshot of the previous page. */
  promptSnapshots(limit: number, before?: number): PromptSnapshot[] {
    return this.scope.store.snapshots(limit, before).map(({ prefix: _internal, ...s }) => s);
  }
}
