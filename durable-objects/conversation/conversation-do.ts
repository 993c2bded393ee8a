// ConversationDO: one per conversation, its single writer. A coordinator: it wires the parts in
// this folder and answers each RPC and hook by delegating to them, after the tenant check (`load`).
import { DurableObject } from "cloudflare:workers";
import type { StoredMessage } from "../../core/types";
import { toToolResultBlock, type ClientToolResult } from "../../core/client-tools";
import type { ReadQuery } from "../../agent/tools/registry";
import type { ConversationRef, ConversationView } from "../../services/record/conversation-head";
import { addNote, type NoteAnswer } from "./attachment-note";
import { AutoTitler } from "./auto-title";
import { ConversationDeletion, missingIfGone } from "./conversation-delete";
import { ConversationStore, type PromptSnapshot, type TimelineCard } from "./conversation-store";
import { FoldCoordinator, type FoldCommit, type FoldOutcome, type FoldSource } from "./fold-coordinator";
import { IdempotencyLedger } from "./idempotency";
import { IndexOutbox, meterDeadTurn, withheldRefused } from "./index-outbox";
import { LifecycleLog } from "./lifecycle-log";
import type { ObjectScope } from "./object-scope";
import { ConversationRecord, type HeadInit } from "./record";
import { ReplayCache, type ReplayView } from "./replay-cache";
import { ConversationSockets } from "./sockets";
import { commitImport, type ImportCommit } from "./transcript-import";
import type { StagedImport } from "../../services/transfer/import-staging";
import { TurnIntake } from "./turn-intake";
import type { TurnAnswer, TurnInput } from "./turn-input";
import { TurnOrder } from "./turn-order";
import type { StopAnswer } from "./turn-stops";
import { pausedMessage, pendingView, PausedTurns } from "./paused-turn";
import { TurnRunner, TURN_PAUSED } from "./turn-runner";
import { markedPage, markedView, markReplaced, withPendingMark } from "./regenerate";
import type { TranscriptMessage, TranscriptPage } from "./regenerate";
import { patchConversation, type ConversationChange, type PatchAnswer } from "./conversation-patch";

export { FOLD_LEASE_MS, type FoldCommit, type FoldOutcome, type FoldSource } from "./fold-coordinator";
export type { ReplayView } from "./replay-cache";
export type { TurnAnswer, TurnInput, TurnRefusal } from "./turn-input";
export type { PatchAnswer } from "./conversation-patch";

/** An attachment's note: saved as a message, held until a paused step's results are saved, or no such conversation. */
export type { NoteAnswer } from "./attachment-note";
/** History imported: the stored messages, refused while a turn waits on client tools (naming its calls), or no such conversation. */
export type ImportAnswer =
  | { kind: "imported"; messages: StoredMessage[] }
  | { kind: "refused"; message: string }
  | { kind: "missing" };

export class ConversationDO extends DurableObject<Env> {
  /** The object's SQLite (tests reach it as `instance.store`). */
  private readonly store: ConversationStore;
  private readonly deletion: ConversationDeletion;
  private readonly record: ConversationRecord;
  private readonly cache: ReplayCache;
  private readonly outbox: IndexOutbox;
  private readonly order: TurnOrder;
  private readonly fold: FoldCoordinator;
  private readonly log: LifecycleLog;
  private readonly intake: TurnIntake;
  private readonly sockets: ConversationSockets;
  private readonly scope: ObjectScope;
  private readonly paused: PausedTurns;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new ConversationStore(ctx.storage.sql);
    const idempotency = new IdempotencyLedger(ctx.storage.sql);
    const ensureSchema = () => {
      this.store.ensureSchema();
      idempotency.ensureSchema();
    };
    ctx.blockConcurrencyWhile(async () => {
      ensureSchema();
      await meterDeadTurn(ctx, this.store);
    });
    this.deletion = new ConversationDeletion(ctx, {
      env: () => this.env,
      forget: () => this.record.forget(),
      ensureSchema,
      flushUsage: (tenantId) => this.outbox.flushUsage(tenantId),
    });
    // Bindings are read through the object at each use: tests swap `env` on the live object.
    const self = this;
    const scope: ObjectScope = (this.scope = {
      ctx,
      store: this.store,
      deletion: this.deletion,
      cortexBookmark: null,
      get env() {
        return self.env;
      },
    });
    this.cache = new ReplayCache(scope);
    this.paused = new PausedTurns(ctx);
    this.outbox = new IndexOutbox(
      scope,
      () => this.record.head,
      () => this.paused.alarmAt(),
    );
    this.record = new ConversationRecord(scope, this.cache, this.outbox);
    this.order = new TurnOrder(ctx);
    this.fold = new FoldCoordinator(scope, this.record, this.cache, this.outbox);
    this.log = new LifecycleLog(scope);
    const runner = new TurnRunner({
      scope,
      record: this.record,
      cache: this.cache,
      log: this.log,
      outbox: this.outbox,
      fold: this.fold,
      paused: this.paused,
      titler: new AutoTitler(scope, this.record, this.outbox, (title) =>
        ctx.waitUntil(this.sockets.announce({ type: "title_changed", title, source: "auto" })),
      ),
      broadcast: (event) => this.sockets.broadcast(event),
      closeRevokedSockets: () => this.sockets.closeRevoked(),
      readOwn: (ref, query) => this.readMessages(ref, query),
    });
    this.intake = new TurnIntake(this.store, idempotency, this.order, runner, {
      cache: this.cache,
      head: () => this.record.head,
    });
    this.sockets = new ConversationSockets(scope, {
      record: this.record,
      paused: this.paused,
      intake: this.intake,
      order: this.order,
    });
  }

  // ---- RPC: metadata ----------------------------------------------------------------------

  create(ref: ConversationRef, init: HeadInit): Promise<ConversationView> {
    return this.record.create(ref, init);
  }

  /** A new conversation from a staged, validated transcript (transcript-import.ts); `missing`: deleted meanwhile. */
  importTranscript(ref: ConversationRef, init: HeadInit, staged: StagedImport): Promise<ImportCommit> {
    return commitImport(
      { scope: this.scope, record: this.record, outbox: this.outbox, fold: this.fold },
      { ref, init, staged },
    );
  }

  async getMeta(ref: ConversationRef): Promise<ConversationView | null> {
    const head = await this.record.load(ref);
    if (!head) return null;
    const state = { unmarkedCopy: this.store.unmarkedCopy(), turnsInFlight: this.order.turnsInFlight };
    return this.withPending(markedView(this.record.view(head), state));
  }

  /** With `requiresAction` while a turn waits on client tools: a client that lost the turn's answer finds the calls here. */
  private async withPending(view: ConversationView): Promise<ConversationView & { requiresAction?: object }> {
    const waiting = await this.paused.get();
    return waiting && !waiting.answers ? { ...view, requiresAction: pendingView(waiting) } : view;
  }

  /** When messages were last added, and whether a turn runs now: what a channel's idle rotation measures (channel-do.ts). */
  async activity(ref: ConversationRef): Promise<{ at: string | null; busy: boolean } | null> {
    return (await this.record.load(ref)) ? { at: this.store.activityAt(), busy: this.order.turnsInFlight > 0 } : null;
  }

  async patch(ref: ConversationRef, change: ConversationChange): Promise<PatchAnswer> {
    const loaded = await this.record.load(ref);
    if (!loaded) return { kind: "missing" };
    const parts = { env: this.scope.env, store: this.store, record: this.record };
    const result = await missingIfGone(
      patchConversation({ ...parts, turnRunning: () => this.order.turnsInFlight > 0 }, loaded, change),
    );
    // The listing row follows the head (title, activity) after the answer; open sockets hear a rename.
    if (result.kind === "updated") {
      this.ctx.waitUntil(this.outbox.pending());
      if (change.title !== undefined)
        this.ctx.waitUntil(this.sockets.announce({ type: "title_changed", title: result.view.title, source: "user" }));
    }
    // The same view as GET's: a turn waiting on client tools shows in the answer too.
    return result.kind === "updated" ? { ...result, view: await this.withPending(result.view) } : result;
  }

  /**
   * Deletes the conversation and everything it owns (see conversation-delete.ts), the running turn's
   * model call aborted first; false when nothing of this tenant's is here; a delete under way is joined or resumed.
   */
  async delete(ref: ConversationRef): Promise<boolean> {
    const tomb = this.deletion.tombstone();
    const mine = tomb
      ? tomb.tenantId === ref.tenantId && tomb.conversationId === ref.conversationId
      : this.record.committing(ref) || !!(await this.record.load(ref));
    if (mine) this.intake.stops.abortRunning();
    if (mine) await this.deletion.delete(ref);
    return mine;
  }

  // ---- RPC: reading -----------------------------------------------------------------------

  /** The complete transcript, paged by count and bytes, a replaced message marked so (regenerate.ts markedPage). */
  async listMessages(ref: ConversationRef, after: number, limit: number): Promise<TranscriptPage | null> {
    const head = await this.record.load(ref);
    return head ? markedPage(this.store, { head, after, limit, turnsInFlight: this.order.turnsInFlight }) : null;
  }

  /** One message by id, or a range paged as the transcript is (by count and bytes): `next` reads on. */
  async readMessages(
    ref: ConversationRef,
    query: ReadQuery,
  ): Promise<{ messages: TranscriptMessage[]; messageCount: number; next?: number } | null> {
    const head = await this.record.load(ref);
    if (!head) return null;
    const { fromSeq = 1, toSeq: through, limit, maxBytes } = query;
    const { messages, more } = query.messageId
      ? { messages: [this.store.byId(query.messageId)].filter((m): m is StoredMessage => !!m), more: false }
      : this.store.transcriptPage(fromSeq - 1, { limit, maxBytes, through });
    const next = more ? { next: messages[messages.length - 1].seq + 1 } : {};
    // Marked as the transcript marks them: a reply a regenerate replaced is never read as current.
    // A model reads them (conversation_read, memory_get): a refused turn's are withheld, as from its requests.
    const read = withheldRefused(this.store, head, markReplaced(head, messages));
    return { messages: read, messageCount: this.store.lastSeq(), ...next };
  }

  async replay(ref: ConversationRef): Promise<ReplayView | null> {
    const head = await this.record.load(ref);
    if (!head) return null;
    // While a regenerate saves its mark, the exchange it replaces is left out already (the live cache holds it).
    const marked = withPendingMark(head, this.store);
    const cache = marked === head ? this.cache : new ReplayCache(this.scope);
    // Results come next only while a turn waits on them, whatever the history ends on.
    return cache.replayView(marked, this.scope.env, !!(await this.paused.get()));
  }

  async timeline(
    ref: ConversationRef,
    after: number,
    limit: number,
  ): Promise<{ cards: TimelineCard[]; next: number | null } | null> {
    return (await this.record.load(ref)) ? this.log.timeline(after, limit) : null;
  }

  /** Newest first; `before` is the id of the last snapshot of the previous page. */
  async promptSnapshots(ref: ConversationRef, limit: number, before?: number): Promise<PromptSnapshot[] | null> {
    return (await this.record.load(ref)) ? this.log.promptSnapshots(limit, before) : null;
  }

  // ---- RPC: turns -------------------------------------------------------------------------

  /**
   * Queues a turn and returns its events as NDJSON. The turn runs to the end even if the caller
   * leaves. With an idempotency key already used, no turn runs: the first outcome or a refusal.
   * While a turn waits on client tools, a new one is refused (409 naming the pending calls).
   * The key is looked up first: a retry of the turn that paused gets that turn's outcome again.
   */
  async send(ref: ConversationRef, input: TurnInput): Promise<TurnAnswer> {
    if (!(await this.record.load(ref))) return { kind: "missing" };
    const keyed = await this.intake.claimKey(input);
    if (keyed.kind !== "new") return keyed;
    const waiting = await this.paused.get();
    if (waiting) {
      // Refused before anything ran: the key is free again, as for any refused request.
      this.intake.releaseKey(input.idempotencyKey);
      return { kind: "refused", refusal: { status: 409, type: TURN_PAUSED, message: pausedMessage(waiting) } };
    }
    // No await between this check and the queueing: a second regenerate sees the first in flight.
    const refusal = this.intake.regenerateRefusal(input);
    if (refusal) {
      this.intake.releaseKey(input.idempotencyKey);
      return { kind: "refused", refusal };
    }
    return { kind: "stream", ndjson: this.intake.stream(ref, input) };
  }

  /**
   * The results of the client tool calls the paused turn waits on: checked (all pending ids, each
   * once, nothing else) before anything is written, then the same turn goes on; its events as NDJSON.
   */
  async postToolResults(
    ref: ConversationRef,
    results: ClientToolResult[],
    idempotencyKey?: string,
  ): Promise<TurnAnswer> {
    if (!(await this.record.load(ref))) return { kind: "missing" };
    // A keyed retry of a post that went through gets its outcome again, not a 409.
    const keyed = await this.intake.claimKey({
      content: results.map(toToolResultBlock),
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    });
    if (keyed.kind !== "new") return keyed;
    const accepted = await this.paused.accept(results, toToolResultBlock);
    if (accepted.kind === "accepted")
      return { kind: "stream", ndjson: this.intake.streamResume(ref, accepted.turn.turnId, idempotencyKey) };
    this.intake.releaseKey(idempotencyKey);
    return accepted;
  }

  /** Stops the running turn, or the turn `turnId`, running or queued (turn-stops.ts). */
  async stopTurn(ref: ConversationRef, turnId?: string): Promise<StopAnswer | null> {
    return (await this.record.load(ref)) ? this.intake.stop(ref, { turnId, paused: this.paused }) : null;
  }

  /**
   * An attachment's note joins the conversation as a user message, in order with the turns, after
   * the tools that read its kind are activated (a failed head write must not leave a note of a purged file).
   */
  async addAttachmentNote(ref: ConversationRef, note: string, tools: readonly string[]): Promise<NoteAnswer> {
    if (!(await this.record.load(ref))) return { kind: "missing" };
    return this.order.inOrder(async (): Promise<NoteAnswer> => {
      const added = await addNote({ paused: this.paused, record: this.record }, note, tools);
      if (added.kind !== "saved") return added;
      await this.sockets.closeRevoked();
      this.sockets.broadcast({ type: "message", turnId: "attachment", message: added.message });
      this.ctx.waitUntil(this.outbox.pending());
      return added;
    });
  }

  /**
   * History brought from elsewhere joins the transcript verbatim, in order with the turns, without
   * a model call: whole exchanges only (the route checks), so the next turn still alternates.
   */
  async importMessages(
    ref: ConversationRef,
    messages: readonly { role: "user" | "assistant"; text: string }[],
  ): Promise<ImportAnswer> {
    if (!(await this.record.load(ref))) return { kind: "missing" };
    return missingIfGone(
      this.order.inOrder(async (): Promise<ImportAnswer> => {
        const waiting = await this.paused.get();
        if (waiting) return { kind: "refused", message: pausedMessage(waiting) };
        const stored = await this.record.append(
          messages.map((m) => ({ role: m.role, content: [{ type: "text" as const, text: m.text }] })),
        );
        // Open sockets get them as they get every other append (in seq order, each once).
        await this.sockets.closeRevoked();
        for (const message of stored) this.sockets.broadcast({ type: "message", turnId: "import", message });
        this.ctx.waitUntil(this.outbox.pending());
        this.ctx.waitUntil(this.fold.maybeDispatch());
        return { kind: "imported", messages: stored };
      }),
    );
  }

  // ---- RPC: the rolling summary -------------------------------------------------------------

  /** The fold a job works on, at an excerpt budget; null when the job is not the fold in flight (stale or redelivered). */
  async foldSource(ref: ConversationRef, jobId: string, budgetChars?: number): Promise<FoldSource | null> {
    const head = await this.record.load(ref);
    return head ? this.fold.source(head, jobId, budgetChars) : null;
  }

  async commitFold(ref: ConversationRef, commit: FoldCommit): Promise<FoldOutcome> {
    if (!(await this.record.load(ref))) return this.fold.gone(ref, commit);
    return this.fold.commit(commit);
  }

  // ---- hooks: alarm and websockets ------------------------------------------------------------

  /** Finishes an interrupted delete, else retries the indexing a failure or an eviction left. */
  override async alarm(): Promise<void> {
    if (await this.deletion.resume()) return;
    await this.outbox.pending();
    // A paused turn whose wait ran out ends; one whose accepted results a restart cut short goes on.
    // The alarm is set again whatever the resume did: a resume that throws past the platform's
    // alarm retries would otherwise leave the turn waiting for ever.
    try {
      const due = await this.paused.due();
      // Not a turn whose continuation is already queued or running: a second would hide it from a stop.
      if (due && (await this.record.load(due.ref)) && !this.intake.stops.has(due.turnId))
        await this.intake.enqueueResume({ ref: due.ref, turnId: due.turnId, sink: null });
    } finally {
      await this.paused.armAlarm();
    }
  }

  override fetch(request: Request): Promise<Response> {
    return this.sockets.upgrade(request);
  }

  override webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    return this.sockets.message(ws, data);
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.sockets.close(ws, code);
  }
}
