// Fold coordination: the lease that keeps at most one fold in flight, the dispatch after a turn,
// the fold the summarizer's job asks for (planned here: only its excerpts cross RPC, never the
// messages) and the commit it calls back with.
import {
  capSummary,
  fallbackFoldSummary,
  foldBudgetChars,
  type FoldPlan,
  foldSummaryCap,
  planFold,
  turnByTurnFoldLength,
} from "../../core/fold";
import { sortableId } from "../../core/ids";
import { messageChars } from "../../core/render";
import { summaryPreamble } from "../../core/replay";
import { startsTurn, withoutRefusedTurns } from "../../core/replay-rules";
import { applyStubsBeforePrompt, type StubInput, stubbedThroughSeq } from "../../core/stubs";
import { FOLD_DELIVERY_MAX_MS, type FoldJob, MAX_RETRY_DELAY_SECONDS } from "../../core/jobs";
import type { StoredMessage, Usage } from "../../core/types";
import { recordUsage } from "../../services/usage";
import { utcDay } from "../../core/models/lookup";
import { logCorpusEvent } from "../../services/corpus";
import type { ConversationHead, ConversationRef } from "../../services/record/conversation-head";
import type { FoldLease } from "./conversation-store";
import type { IndexOutbox } from "./index-outbox";
import type { ObjectScope } from "./object-scope";
import type { ConversationRecord } from "./record";
import type { ReplayCache } from "./replay-cache";

/**
 * How long a fold's lease holds from its dispatch or a delivery's start (each renews it): a whole
 * delivery (a consumer's wall time, past its call's timeout) and the longest backoff before the
 * next, plus a minute of queue latency, so a failing job's retries keep it. A lease that expires
 * all the same (a queue backlog, a crashed consumer) lets a later turn send the same job again.
 */
export const FOLD_LEASE_MS = FOLD_DELIVERY_MAX_MS + MAX_RETRY_DELAY_SECONDS * 1000 + 60_000;

/**
 * The lease with the count of its job's deliveries, over every message that carried the job: the
 * queue counts each message from 1, and a job sent again after its lease expired is a new message.
 * Absent from a lease taken before the count was kept.
 */
type ChainLease = FoldLease & { deliveries?: number };

/**
 * What the summarizer needs to fold, made here so that what crosses RPC (capped at 32 MiB) is
 * bounded by the fold prompt's budget, whatever the messages hold: the previous summary, the plan's
 * excerpts, and the region's messages by id and seq (the commit names its boundary by them).
 */
export interface FoldSource {
  summary: string | null;
  summarizedThroughMessage: number;
  settings: ConversationHead["settings"];
  region: { id: string; seq: number }[];
  /** The excerpts' budget the plan was made at. */
  budgetChars: number;
  /**
   * The most the summary of the plan's fold may hold (foldSummaryCap): summaryMaxChars, and never
   * more than what it replaces on replay. The commit holds the summary to the same cap. Absent from
   * an object deployed before it (the summarizer then asks for summaryMaxChars).
   */
  maxChars?: number;
  /** Where the fold ends and what its request shows; null when the region has nowhere to cut. */
  plan: FoldPlan | null;
  /** What a fold whose model keeps failing commits instead: every message before the mark, unseen. */
  fallbackSummary: string | null;
  /** This delivery's number among the job's (the lease's count; 1 on the first). */
  delivery?: number;
}

/** A fold delivery's paid model call: its usage ledger row (the id is per delivery and call). */
export interface FoldUsage {
  id: string;
  model: string;
  usage: Usage;
}

export type FoldCommit = (
  | { jobId: string; kind: "summary"; summary: string; boundaryMessageId: string; boundarySeq: number }
  /** The region had no place to cut (e.g. one monster turn): release the lease, change nothing. */
  | { jobId: string; kind: "nothing-to-fold" }
  /** The call answered but its answer is no summary (the job is retried): only its usage is kept. */
  | { jobId: string; kind: "spent" }
) & {
  /** The delivery's paid call, metered here whatever becomes of the commit. */
  usage?: FoldUsage;
};

export interface FoldOutcome {
  applied: boolean;
  reason: string;
}

/**
 * The master's messages a fold may show: without the refused turns, as every later request leaves
 * them out (core/replay-rules.ts withoutRefusedTurns, between turns as /replay and the recall tools read
 * them; an attachment's note inside such a turn stays). A summary rides every later request and its
 * episode is found by memory_search, so what the fold shows must be what a replay may carry. The
 * boundary is still a message the fold kept; a dropped turn before it is passed over unseen (its
 * originals stay in the transcript, as the record keeps every refused turn). The dispatch's
 * measure (replay-cache.ts foldableChars) calls the same rule.
 */
const foldable = (master: readonly StoredMessage[]) => withoutRefusedTurns(master, true);

/**
 * How many messages past what it needs a fold first reads of the tail, doubled until enough. A
 * fold takes one threshold of growth from the tail's front, and an import leaves a tail of up to
 * 50,000 messages for ~N/80 folds to take in turn: a fold that went over the whole tail would cost
 * O(N²) in all.
 */
const LOOKAHEAD = 64;

/**
 * Where the tail's front that reaches index `from` ends: the first index from there on where a
 * turn starts (core/replay-rules.ts startsTurn), or the tail's end. A refused turn ends where the
 * next one starts, so the front's refused turns are the whole tail's, and a front with a prompt
 * after it ages its results as the whole tail does up to there.
 */
export function frontEnd(tail: readonly StoredMessage[], from: number): number {
  let end = Math.min(from, tail.length);
  while (end < tail.length && !startsTurn(tail, end)) end++;
  return end;
}

/**
 * The region a fold takes of the tail (turnByTurnFoldLength over what foldable keeps of it), read
 * from the tail's front only: foldable keeps of a front what it keeps of it in the whole tail, and
 * a length shorter than the front's is the whole tail's (turnByTurnFoldLength looks no further than
 * where it ends). The front grows until the region ends inside it.
 */
export function foldRegion(
  tail: readonly StoredMessage[],
  settings: { tailMessages: number; foldThresholdChars: number },
): readonly StoredMessage[] {
  for (let reach = LOOKAHEAD; ; reach *= 2) {
    const end = frontEnd(tail, reach);
    const all = foldable(tail.slice(0, end));
    const length = turnByTurnFoldLength(all, settings.tailMessages, settings.foldThresholdChars);
    if (length < all.length || end === tail.length) return all.slice(0, length);
  }
}

/**
 * The messages of the tail before index `end` as the replay shows them now (/replay, the next
 * request: core/replay.ts), their stale tool results stubbed with the stubs in force: a fold takes
 * away only that much of a result already stubbed. The stubbing pass goes over the tail's front
 * only. A front ending where a turn starts, its prompt following, has the whole tail's refused
 * turns and exchanges up to there, so its stub watermark is never past the whole tail's (stubs
 * only advance as exchanges follow): each result the front stubs, the whole tail stubs. The front
 * is taken once every stale result before `end` that it leaves whole would stay whole stubbed
 * through `end` too (none lies between its watermark and `end`); until then it grows.
 */
export function shownBefore(
  tail: readonly StoredMessage[],
  o: { end: number; stubs: StubInput; conversationId: string },
): (m: StoredMessage) => StoredMessage {
  const { end, stubs, conversationId } = o;
  if (end <= 0) return (m) => m;
  for (let reach = end + LOOKAHEAD; ; reach *= 2) {
    const front = tail.slice(0, frontEnd(tail, reach));
    const { messages } = applyStubsBeforePrompt(front, stubs, conversationId);
    if (front.length < tail.length) {
      const through = Math.max(stubs.stubbedThrough ?? 0, tail[end - 1].seq);
      const every = applyStubsBeforePrompt(front, { ...stubs, stubbedThrough: through }, conversationId).messages;
      let same = true;
      for (let i = 0; i < end && same; i++) same = (messages[i] === front[i]) === (every[i] === front[i]);
      if (!same) continue;
    }
    const shown = new Map<number, StoredMessage>();
    for (let i = 0; i < end; i++) if (messages[i] !== front[i]) shown.set(front[i].seq, messages[i]);
    return (m) => shown.get(m.seq) ?? m;
  }
}

/** What the summary's preamble and acknowledgement weigh on replay around the summary (core/replay.ts). */
const preambleChars = (conversationId: string, throughSeq: number): number =>
  summaryPreamble(conversationId, { summary: "", throughSeq }).reduce(
    (n, m) => n + (typeof m.content === "string" ? m.content.length : messageChars({ content: m.content })),
    0,
  );

/**
 * The cap of a summary that folds `folded` (the foldable messages before the boundary) into the
 * head's summary, through seq `throughSeq`: never more than the replay chars it takes away, each
 * message weighed as the replay shows it (`shown`: a stale tool result as its stub).
 */
function summaryCap(
  head: ConversationHead,
  fold: { folded: readonly StoredMessage[]; throughSeq: number; shown: (m: StoredMessage) => StoredMessage },
): number {
  const before = head.summary ? preambleChars(head.id, head.summarizedThroughMessage ?? 0) : 0;
  return foldSummaryCap({
    summaryMaxChars: head.settings.summaryMaxChars,
    previousSummaryChars: head.summary?.length ?? 0,
    foldedChars: fold.folded.reduce((n, m) => n + messageChars(fold.shown(m)), 0),
    addedChars: preambleChars(head.id, fold.throughSeq) - before,
  });
}

export class FoldCoordinator {
  constructor(
    private readonly scope: ObjectScope,
    private readonly record: ConversationRecord,
    private readonly cache: ReplayCache,
    private readonly outbox: IndexOutbox,
  ) {}

  /** The tail's messages before index `end` as the replay shows them now (shownBefore). */
  private shownInReplay(head: ConversationHead, tail: readonly StoredMessage[], end: number) {
    const stubs = { ...head.settings, stubbedThrough: head.stubbedThroughMessage };
    return shownBefore(tail, { end, stubs, conversationId: head.id });
  }

  /**
   * When a fold now would fold more than the threshold and none is in flight: take the lease and
   * send one fold job. The check and the lease are one synchronous step, so two turns never both
   * dispatch.
   */
  async maybeDispatch(): Promise<void> {
    const { store } = this.scope;
    const head = this.record.head;
    // Zero when there is nowhere to cut: such a job would only burn a queue hop.
    if (!head || this.cache.foldableChars(head) <= head.settings.foldThresholdChars) return;
    const now = Date.now();
    const lease: ChainLease | null = store.getLease();
    if (lease && lease.expiresAt > now) return;
    // A lease that expired before its job committed (the job waits behind a backlog or between
    // retries, or its consumer died) sends the same job again, its lease and count of deliveries
    // kept: whichever message of it comes first holds the lease, and a failing job's deliveries
    // still add up to the fallback summary. A new job instead would make every message of the old
    // one stale, so a queue slower than the lease would never fold.
    const job: FoldJob = {
      kind: "fold",
      jobId: lease?.jobId ?? sortableId("fold"),
      tenantId: head.tenantId,
      conversationId: head.id,
      requestedAt: new Date(now).toISOString(),
    };
    const taken: ChainLease = lease
      ? { ...lease, expiresAt: now + FOLD_LEASE_MS }
      : { jobId: job.jobId, dispatchedAt: now, expiresAt: now + FOLD_LEASE_MS, deliveries: 0 };
    store.putLease(taken);
    try {
      await this.scope.env.JOB_QUEUE.send(job);
    } catch (err) {
      // Not sent: the next turn tries again. A new job's lease is freed; a job sent again keeps its
      // lease, expired again (its count of deliveries as it stands now).
      console.error("fold dispatch failed", err);
      const held: ChainLease | null = store.getLease();
      if (held?.jobId !== job.jobId || held.expiresAt !== taken.expiresAt) return;
      if (lease) store.putLease({ ...held, expiresAt: lease.expiresAt });
      else store.clearLease();
    }
  }

  /**
   * The fold a job works on (of the loaded `head`), planned at `budgetChars` (by default what the
   * model's window allows); null when the job is not the fold in flight (stale or redelivered). A
   * sub-agent's segment never enters a fold, nor a superseded exchange, nor a refused turn.
   */
  source(head: ConversationHead, jobId: string, budgetChars?: number): FoldSource | null {
    const { store } = this.scope;
    const lease: ChainLease | null = store.getLease();
    if (lease?.jobId !== jobId) return null;
    // Each delivery renews the lease: the queue's retries of a slow or failing call (backoff
    // included) then do not outlast it, and no turn sends the job again while they run. A delivery
    // asks first without a budget, then with a smaller one after each overflow: the first is counted.
    const deliveries = (lease.deliveries ?? 0) + (budgetChars === undefined ? 1 : 0);
    const renewed: ChainLease = { ...lease, expiresAt: Date.now() + FOLD_LEASE_MS, deliveries };
    store.putLease(renewed);
    const through = head.summarizedThroughMessage ?? 0;
    const { settings } = head;
    // The master's messages after the boundary, none superseded, as the replay cache holds them:
    // read from its front only, as far as the fold needs (never the whole tail from SQLite).
    const tail = this.cache.replaySource(head);
    // One threshold of growth per fold, however the region arrived (an import brings it all at once).
    const region = foldRegion(tail, settings);
    const budget = budgetChars ?? foldBudgetChars(settings);
    const plan = planFold(region, settings.tailMessages, budget);
    // Each fold's cap, over what it takes away: the plan's cut, or the fallback's mark (never past it).
    const shown = this.shownInReplay(head, tail, plan ? tail.indexOf(region[plan.mark - 1]) + 1 : 0);
    const capAt = (end: number) =>
      summaryCap(head, { folded: region.slice(0, end), throughSeq: region[end].seq - 1, shown });
    return {
      summary: head.summary,
      summarizedThroughMessage: through,
      settings,
      region: region.map((m) => ({ id: m.id, seq: m.seq })),
      budgetChars: budget,
      maxChars: plan ? capAt(plan.cut) : settings.summaryMaxChars,
      plan,
      fallbackSummary: plan ? fallbackFoldSummary(head.summary, region.slice(0, plan.mark), capAt(plan.mark)) : null,
      delivery: Math.max(1, deliveries),
    };
  }

  /**
   * Applies a fold (to a loaded conversation) against the freshest state: the job must hold the
   * lease, the boundary message must exist with the seq the job saw, and the boundary never moves
   * backwards. Messages are never touched: only the head's summary fields change, in R2 first,
   * then here.
   */
  async commit(commit: FoldCommit): Promise<FoldOutcome> {
    const { usage } = commit;
    const head = this.record.head;
    // The call was paid for whether or not its fold applies: the row goes in the outbox (SQLite,
    // its D1 write retried by the alarm) before anything here can fail, and to D1 before the answer.
    // Only the usage rows are awaited: the outbox's whole run also indexes what is unindexed, which
    // after an import may take minutes.
    if (usage && head)
      this.outbox.meter(
        usage.id,
        { tenantId: head.tenantId, conversationId: head.id, model: usage.model, usage: usage.usage },
        "fold",
      );
    try {
      if (commit.kind === "spent") return { applied: false, reason: "the call's answer could not be used" };
      return await this.apply(commit);
    } finally {
      if (usage && head) {
        await this.outbox.flushUsage(head.tenantId).catch((err) => console.error("fold usage left to the outbox", err));
        this.scope.ctx.waitUntil(this.outbox.pending());
      }
    }
  }

  /**
   * A commit for a conversation that is gone (deleted while its fold ran): nothing to apply, but
   * the paid call's row goes straight to D1, where the ledger outlives the conversation.
   */
  async gone(ref: ConversationRef, commit: FoldCommit): Promise<FoldOutcome> {
    const { usage } = commit;
    if (usage)
      await recordUsage(this.scope.env.DB, {
        tenantId: ref.tenantId,
        conversationId: ref.conversationId,
        id: usage.id,
        model: usage.model,
        usage: usage.usage,
        kind: "fold",
        day: utcDay(),
      });
    return { applied: false, reason: "conversation not found" };
  }

  private async apply(commit: Exclude<FoldCommit, { kind: "spent" }>): Promise<FoldOutcome> {
    const { ctx, store } = this.scope;
    const outcome = await this.record.updateHead<FoldOutcome>((head) => {
      const reject = (reason: string) => {
        // A job that lost its lease must not free the lease of the fold that replaced it.
        if (store.getLease()?.jobId === commit.jobId) store.clearLease();
        return { next: null, result: { applied: false, reason } };
      };
      if (store.getLease()?.jobId !== commit.jobId)
        return { next: null, result: { applied: false, reason: "stale job: not the fold in flight" } };
      if (commit.kind === "nothing-to-fold") return reject("nothing to fold");
      const boundary = store.byId(commit.boundaryMessageId);
      if (!boundary || boundary.seq !== commit.boundarySeq) return reject("boundary message not found");
      if (commit.boundarySeq - 1 <= (head.summarizedThroughMessage ?? 0))
        return reject("boundary would not move forward");
      // The master's messages after the old boundary (the replay cache's tail): the new boundary's
      // place in it is found from its front, over the messages the fold takes.
      const tail = this.cache.replaySource(head);
      let at = 0;
      while (at < tail.length && tail[at].seq < commit.boundarySeq) at++;
      // tailMessages raised while the fold ran: the boundary must still leave the tail it now asks for.
      if (tail.length - at < head.settings.tailMessages)
        return reject("the boundary would keep fewer than tailMessages");
      // Never more than the fold takes away from the replay, as the summarizer asked (FoldSource.maxChars).
      const folded = foldable(tail.slice(0, frontEnd(tail, at))).filter((m) => m.seq < commit.boundarySeq);
      const cap = summaryCap(head, {
        folded,
        throughSeq: commit.boundarySeq - 1,
        shown: this.shownInReplay(head, tail, at),
      });
      const now = new Date().toISOString();
      // The stubs in force now, over the tail the last request replayed: the new tail keeps them.
      const stubbedThrough = stubbedThroughSeq(tail, {
        ...head.settings,
        stubbedThrough: head.stubbedThroughMessage,
      });
      const next: ConversationHead = {
        ...head,
        // Replayed on every request: a lone surrogate would make each of them a 400. Held to the cap
        // in force now (and to what the fold takes away): one lowered while the call ran cuts the paid
        // summary as the summarizer cuts an overlong reply (at a line or sentence end), rather than
        // throwing it away for another call.
        summary: capSummary(commit.summary, cap).toWellFormed(),
        summarizedThroughMessage: commit.boundarySeq - 1,
        summarizedThroughMessageId: commit.boundaryMessageId,
        ...(stubbedThrough > 0 ? { stubbedThroughMessage: stubbedThrough } : {}),
        foldCount: head.foldCount + 1,
        lastFoldAt: now,
        updatedAt: now,
      };
      return { next, result: { applied: true, reason: "folded" } };
    });
    if (outcome.applied) {
      if (store.getLease()?.jobId === commit.jobId) store.clearLease();
      const head = this.record.head!;
      // The fold's summary becomes a dated episode of this conversation, written to D1 by the indexer.
      store.putOutbox(`episode:${commit.jobId}`, {
        tenantId: head.tenantId,
        conversationId: head.id,
        foldJobId: commit.jobId,
        throughSeq: head.summarizedThroughMessage,
        summary: head.summary,
        at: head.lastFoldAt,
      });
      // With a usage row, commit starts the same run.
      if (!commit.usage) ctx.waitUntil(this.outbox.pending());
      ctx.waitUntil(
        logCorpusEvent(this.scope.env, {
          tenantId: head.tenantId,
          event: "fold.applied",
          fields: {
            conversation: head.id,
            job: commit.jobId,
            through_seq: head.summarizedThroughMessage,
            summary_chars: head.summary?.length ?? 0,
            folds: head.foldCount,
          },
        }).catch(() => {}),
      );
      // The replay cache follows the new boundary at its next use (ReplayCache.follow).
      // A region that grew past several thresholds (an import, turns queued behind this fold) folds
      // on, one fold at a time, until what is left is under the threshold.
      ctx.waitUntil(this.maybeDispatch());
    }
    return outcome;
  }
}
