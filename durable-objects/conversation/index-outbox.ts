// The indexing outbox: new messages (into the tenant's cortex shard), fold episodes, the listing
// row and the usage of each turn and automatic title call (D1) land at least once;
// a durable alarm retries whatever a failure or an eviction left undone.
import { isPrompt, refusedTurns } from "../../core/replay-rules";
import { isAgentSegment, type StoredMessage } from "../../core/types";
import { type CortexDoc, messageDoc, refusedRole } from "../../services/cortex/search-index";
import { cortexFor } from "../../services/cortex/routing";
import { refreshConversationRow } from "../../services/conversation-list";
import { recordEpisode } from "../../services/memory/notes";
import { recordUsage, type UsageEvent, type UsageKind } from "../../services/usage";
import { utcDay } from "../../core/models/lookup";
import type { Usage } from "../../core/types";
import type { ConversationHead } from "../../services/record/conversation-head";
import { ConversationGone } from "./conversation-delete";
import { noteDeadTurnSpending } from "./idempotency";
import { moveCortexBookmark, type ObjectScope } from "./object-scope";
import type { ConversationStore } from "./conversation-store";
import { supersededBy } from "./regenerate";

/** Messages an indexing batch reads at most; it holds no more than a transcript page's bytes either. */
const INDEX_BATCH = 100;
/**
 * The outbox item a user's rename leaves (conversation-patch.ts): the listing write that carries
 * the new title then forgets the tenant's stored <memory_map>.
 */
export const FORGET_MEMORY_MAP = "map:forget";

/** The titles a FORGET_MEMORY_MAP item names (conversation-patch.ts); none in an item of before: forget every map. */
export const formerTitles = (payload: unknown): string[] | undefined => {
  const titles = (payload as { titles?: unknown } | null)?.titles;
  return Array.isArray(titles) && titles.every((t) => typeof t === "string") ? titles : undefined;
};
const INDEX_RETRY_MS = 30_000;
/** How soon the run after one that ended short of caught up comes (followUp). */
const FOLLOW_UP_MS = 1_000;
/** The waits between tries of a usage row written straight to D1: about 20 s in all, inside waitUntil's 30. */
const DIRECT_RETRY_MS = [250, 1_000, 3_000, 6_000, 10_000];

/** Each object's outbox by its scope: how the turn's tools (tool-context.ts indexSettled) find its run. */
const outboxOf = new WeakMap<ObjectScope, IndexOutbox>();

/**
 * The object's indexing runs under way, over (resolved at once when none is, or for a scope with
 * no outbox): tool-context.ts awaits it, bounded, before a search of the tenant's messages.
 */
export const indexSettled = (scope: ObjectScope): Promise<void> => outboxOf.get(scope)?.settled() ?? Promise.resolve();

export class IndexOutbox {
  private indexing: Promise<void> | null = null;
  private indexAgain = false;
  private rowAgain = false;
  /** The last vector step left documents without a vector: the next run (the alarm's) goes on. */
  private vectorsLeft = false;

  constructor(
    private readonly scope: ObjectScope,
    /** The loaded head, if any (else the stored one is read). */
    private readonly loadedHead: () => ConversationHead | undefined,
    /** An alarm another part still needs (a paused turn's deadline): kept when indexing is caught up. */
    private readonly alarmNeeded: () => Promise<number | null> = async () => null,
  ) {
    outboxOf.set(scope, this);
  }

  /**
   * Resolves once no run is under way: the one in progress, then any a pending() asked for during it
   * (its `then` on the run, registered before this call's, starts it first). It never rejects.
   */
  async settled(): Promise<void> {
    for (let run = this.indexing; run; run = this.indexing) await run.catch(() => {});
  }

  /**
   * A durable reminder to index what was just appended: if the object dies before the turn's
   * indexing runs (eviction, restart, a failed D1 call), the alarm brings it back to finish the job.
   */
  remind(): void {
    void this.scope.ctx.storage.setAlarm(Date.now() + INDEX_RETRY_MS);
  }

  /**
   * A turn part's (or the title call's: `kind`) usage for the tenant's ledger (D1, GET /v1/usage),
   * written with the next run, once (the row's id is `key`); a part that spent no tokens writes
   * nothing. Once the conversation is being deleted the row still goes in the outbox while the
   * purge will send it (conversation-delete.ts `outboxFlushedLater`); after the purge read the
   * outbox, or once the storage is gone, it goes to D1 itself, retried (the ledger outlives the
   * conversation). It never throws: a turn's answer (or its error) never waits on its metering.
   */
  meter(
    key: string,
    { tenantId, ...part }: { tenantId: string; conversationId: string; model: string; usage: Usage },
    kind: UsageKind = "turn",
  ): void {
    if (spentNothing(part.usage)) return;
    const { ctx, store, deletion } = this.scope;
    const row = { ...part, kind, day: utcDay() };
    if (!deletion.deleted || deletion.outboxFlushedLater)
      try {
        store.putOutbox(`usage:${key}`, row);
        return;
      } catch (err) {
        // Storage refused the row (a delete removing it): D1 directly is the way left.
        console.error("usage not kept in the outbox; writing it to D1", key, err);
      }
    ctx.waitUntil(this.recordRetried({ ...row, tenantId, id: key }));
  }

  /**
   * A usage row written to D1 outside the outbox, tried again with backoff (within the platform's
   * waitUntil allowance); the binding is read at each try. A row already written is not doubled:
   * the insert does nothing on an id the ledger holds.
   */
  private async recordRetried(event: UsageEvent): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await recordUsage(this.scope.env.DB, event);
      } catch (err) {
        if (attempt >= DIRECT_RETRY_MS.length) return console.error("usage not metered", event.id, err);
        console.error("usage write failed; retrying", event.id, err);
        await new Promise((r) => setTimeout(r, DIRECT_RETRY_MS[attempt]));
      }
    }
  }

  /** The usage rows the outbox holds (of `items`, when the caller read it already), not yet in D1. */
  private usageWaiting(tenantId: string, items = this.scope.store.outbox()): { key: string; event: UsageEvent }[] {
    return items
      .filter((item) => item.key.startsWith("usage:"))
      .map((item) => ({
        key: item.key,
        event: {
          // Rows put before the title's were a turn's and name no kind.
          kind: "turn",
          ...(item.payload as Omit<UsageEvent, "tenantId" | "id" | "kind"> & { kind?: UsageKind }),
          tenantId,
          id: item.key.slice("usage:".length),
        },
      }));
  }

  /**
   * The delete's part (conversation-delete.ts, before the storage goes): the usage rows still
   * waiting go to D1 now, where the ledger outlives the conversation. A failure throws, so the
   * purge stops short with the storage kept and the alarm tries again.
   */
  async flushUsage(tenantId: string): Promise<void> {
    await Promise.all(this.usageWaiting(tenantId).map((u) => recordUsage(this.scope.env.DB, u.event)));
  }

  /** Indexes every message not yet in D1, then refreshes the listing row. Retries by alarm on failure. */
  pending(): Promise<void> {
    if (this.indexing) {
      this.indexAgain = true;
      // A head change (a rename, the automatic title) asked for after the row was built gets a run of its own.
      this.rowAgain = true;
      return this.indexing.then(() => (this.rowAgain ? this.pending() : undefined));
    }
    const { ctx, store, deletion } = this.scope;
    this.rowAgain = false;
    this.indexing = (async () => {
      if (deletion.deleted) return;
      const head = this.loadedHead() ?? store.getHead();
      if (!head) return;
      let wrote = this.vectorsLeft;
      do {
        this.indexAgain = false;
        for (;;) {
          // Bounded by bytes too, as a transcript page is: 100 messages of megabytes each would not fit
          // the object's memory, and the alarm would retry that same batch for good.
          const batch = store.transcriptPage(store.indexedThrough(), { limit: INDEX_BATCH }).messages;
          if (!batch.length) break;
          // Written at the shard's primary; its bookmark lets the next search see these rows. The mark is
          // read after the write: a tenant's first write is assigned its shard inside it (shard.ts
          // `assign`), and the handle's name before it is a stand-in's.
          const written = await deletion.guard(async () => {
            const shard = await cortexFor(this.scope.env, head.tenantId);
            await shard.index(head.tenantId, labelledDocs(store, head, batch));
            return shard.written;
          });
          moveCortexBookmark(this.scope, written);
          store.setIndexedThrough(batch[batch.length - 1].seq);
          wrote = true;
        }
      } while (this.indexAgain);
      for (const item of store.outbox()) {
        if (item.key.startsWith("usage:") || item.key === FORGET_MEMORY_MAP) continue;
        if (item.key.startsWith("episode:")) {
          // As a batch of messages: the episode's shard write moves the read bookmark, so it is found.
          const written = await deletion.guard(() =>
            recordEpisode(this.scope.env, item.payload as Parameters<typeof recordEpisode>[1]),
          );
          moveCortexBookmark(this.scope, written);
          wrote = true;
        }
        store.deleteOutbox(item.key);
      }
      // The listing row and the turns' usage rows in one D1 round trip (a usage row is written once by its id).
      // Read after the episodes' awaits, in the step that clears `rowAgain`: a row put before it (the
      // automatic title's, then its pending()) is written here, one put after it is left for the run after.
      const items = store.outbox();
      const usage = this.usageWaiting(head.tenantId, items);
      const forget = items.find((item) => item.key === FORGET_MEMORY_MAP);
      // `updatedAt` is the last activity (conversation-store.ts activityAt): a fold or a settings
      // change refreshes the row without moving the conversation in `?order=activity`.
      const last = store.lastSeq();
      const activity =
        store.activityAt() ?? (last ? store.range(last, last)[0]?.createdAt : undefined) ?? head.createdAt;
      const row = {
        messageCount: last,
        updatedAt: activity,
        title: (this.loadedHead() ?? store.getHead() ?? head).title,
      };
      this.rowAgain = false;
      await deletion.guard(() =>
        refreshConversationRow(this.scope.env.DB, {
          id: head.id,
          fields: row,
          usage: usage.map((u) => u.event),
          forgetMemoryMapOf: forget ? head.tenantId : undefined,
          formerTitles: forget ? formerTitles(forget.payload) : undefined,
        }),
      );
      for (const u of usage) store.deleteOutbox(u.key);
      // A rename while this ran put its title in the item: left for the next run to forget.
      const now = store.outbox().find((item) => item.key === FORGET_MEMORY_MAP);
      if (forget && JSON.stringify(now?.payload) === JSON.stringify(forget.payload))
        store.deleteOutbox(FORGET_MEMORY_MAP);
      // The documents just written get their vectors (a no-op where the cortex is lexical only); until
      // that succeeds, the alarm's run tries again (after an eviction, the next search's catch-up does).
      if (wrote) {
        this.vectorsLeft = true;
        const vectors = await deletion.guard(async () => {
          const shard = await cortexFor(this.scope.env, head.tenantId);
          return { ...(await shard.syncVectors(head.tenantId)), written: shard.written };
        });
        moveCortexBookmark(this.scope, vectors.written);
        this.vectorsLeft = vectors.left;
      }
      // Caught up: the reminder append set is not needed (a later append sets it again).
      if (this.caughtUp()) {
        const needed = await this.alarmNeeded();
        await (needed === null ? ctx.storage.deleteAlarm() : ctx.storage.setAlarm(needed));
      }
      // Checked again after the alarm was cleared: an item metered meanwhile needs its run too.
      if (!this.caughtUp()) await this.followUp();
    })()
      .catch(async (err) => {
        if (err instanceof ConversationGone) return;
        console.error("cortex indexing failed; retrying by alarm", err);
        // Never later than an alarm already set (a paused turn's wait ends at its `expiresAt`).
        const retry = Date.now() + INDEX_RETRY_MS;
        const set = await ctx.storage.getAlarm();
        if (set === null || set > retry) await ctx.storage.setAlarm(retry);
      })
      .finally(() => (this.indexing = null));
    return this.indexing;
  }

  /** Every message indexed, the outbox empty, no run asked for during this one, no vector left to embed. */
  private caughtUp(): boolean {
    const { store } = this.scope;
    return store.indexedThrough() >= store.lastSeq() && !store.outbox().length && !this.indexAgain && !this.vectorsLeft;
  }

  /**
   * A run that ends short of caught up (an item put, or a message appended, after it read them; a
   * pending() it absorbed; vectors left to embed) makes sure a run follows: the alarm, soon, unless
   * an earlier one is set. Nothing else may start one: meter() does not, and the alarm's own run
   * has no alarm left once it fired, so an idle conversation's row would wait for its next activity.
   * Each such run has work that arrived during the last one (or vectors left after a full batch),
   * so this never loops on nothing; a failing D1 throws and takes the failure path's INDEX_RETRY_MS.
   */
  private async followUp(): Promise<void> {
    const { ctx, deletion } = this.scope;
    // Once the conversation is being deleted its purge owns the outbox (and the alarm).
    if (deletion.deleted) return;
    const soon = Date.now() + FOLLOW_UP_MS;
    const set = await ctx.storage.getAlarm();
    if (set === null || set > soon) await ctx.storage.setAlarm(soon);
  }
}

/**
 * A turn part the last incarnation died in (an eviction, a crash) never reached its meter: what
 * its model calls had reported goes to the ledger now, a row per model that spent, through the
 * outbox (the alarm sends it); the turn's key rows keep the total for a retry's answer.
 */
export async function meterDeadTurn(ctx: DurableObjectState, store: ConversationStore): Promise<void> {
  const left = store.takeSpending();
  if (!left?.usage || spentNothing(left.usage)) return;
  const { key, conversationId, day = utcDay(), model, usage } = left;
  // A row per model that spent (a refusal fallback's part apart), as the part's meter writes them.
  const rows = (left.parts ?? [{ key, model, usage }]).filter((p) => !spentNothing(p.usage));
  for (const row of rows)
    store.putOutbox(`usage:${row.key}`, { conversationId, model: row.model, usage: row.usage, kind: "turn", day });
  // A keyed retry of the dead turn answers with what was billed here (the part's key starts with its turnId).
  try {
    noteDeadTurnSpending(ctx.storage.sql, key.split(":")[0], usage);
  } catch (err) {
    console.error("dead turn's usage not kept for its retry", key, err);
  }
  if ((await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now() + 1_000);
}

/** The store as the refused marks read it; a plain list of messages (a test's) may lack userSeqs. */
type RefusalStore = Pick<ConversationStore, "range" | "lastSeq" | "refusalBetween"> &
  Partial<Pick<ConversationStore, "userSeqs">>;
type RefusalHead = Pick<ConversationHead, "superseded">;

/**
 * The documents of a batch of new messages, each refused turn's marked (search-index.ts
 * refusedRole) so the model's searches leave it out as its requests do (refusedAmong). A turn can
 * span batches (a paused turn, a long one), and a refusal's fallback answer comes after the
 * refusal: so when the turns the batch touches hold a refusal, their messages of earlier batches
 * are relabelled too (the role rewritten, the body unchanged).
 */
export function labelledDocs(
  store: RefusalStore,
  head: Pick<ConversationHead, "tenantId" | "id" | "superseded">,
  batch: readonly StoredMessage[],
): CortexDoc[] {
  const doc = (m: StoredMessage) => messageDoc(head.tenantId, head.id, m);
  const span = refusedSpan(store, head, batch);
  if (!span) return batch.map(doc);
  const first = batch[0].seq;
  const run = span.from < first ? [...store.range(span.from, first - 1), ...batch] : batch;
  const refused = refusedAmong(store, head, run);
  if (!refused) return batch.map(doc);
  return run.map((m) => {
    const d = doc(m);
    return { ...d, role: refused.has(m.seq) ? refusedRole(d.role) : d.role, relabel: true };
  });
}

/**
 * What the model reads back of a refused turn's message (conversation_read, memory_get, any
 * conversation of the tenant): this note in place of its content. The turn is left out of every
 * later request (core/replay-rules.ts), so a read must not bring it back; the record keeps it.
 */
export const REFUSED_WITHHELD =
  "[withheld: this message is part of a turn the model refused, and a refused turn is left out of every later request (the context is reset after a refusal), so it is not read back either; the person still sees it in the transcript]";

/** `run` (consecutive messages, oldest first) with each refused turn's message's content withheld (REFUSED_WITHHELD). */
export function withheldRefused<T extends StoredMessage>(store: RefusalStore, head: RefusalHead, run: T[]): T[] {
  const refused = run.length ? refusedAmong(store, head, run) : null;
  if (!refused?.size) return run;
  return run.map((m) => (refused.has(m.seq) ? { ...m, content: [{ type: "text", text: REFUSED_WITHHELD }] } : m));
}

/**
 * The seqs of `run`'s messages (consecutive, oldest first) that a refused turn holds, as /replay
 * sees it (core/replay-rules.ts refusedTurns, between turns): the refused reply, and its whole
 * turn unless a fallback model answered after it; a sub-agent's message goes with the thread's
 * message before it. An exchange a regenerate superseded is a history of its own, as /replay saw
 * it before the regenerate (its refused turn stays refused, and the master's refused turn before it
 * does not take it along). The whole of each turn `run` touches is read, from its prompt to the
 * next turn's. Null when those turns hold no refusal.
 */
export function refusedAmong(
  store: RefusalStore,
  head: RefusalHead,
  run: readonly StoredMessage[],
): ReadonlySet<number> | null {
  const span = refusedSpan(store, head, run);
  if (!span) return null;
  const first = run[0].seq;
  const last = run[run.length - 1].seq;
  const { from, to } = span;
  const around = [
    ...(from < first ? store.range(from, first - 1) : []),
    ...run,
    ...(to > last ? store.range(last + 1, to) : []),
  ];
  if (!around.some((m) => m.stopReason === "refusal")) return null;
  // The master's thread, and each superseded exchange (its ranges name the copy that replaced it).
  const histories = new Map<string, StoredMessage[]>();
  for (const m of around) {
    const by = supersededBy(head, m.seq) ?? "";
    const history = histories.get(by);
    if (history) history.push(m);
    else histories.set(by, [m]);
  }
  const refused = new Set<number>();
  for (const history of histories.values())
    for (const seq of refusedIn(history)) if (seq >= first && seq <= last) refused.add(seq);
  return refused;
}

/** The seqs of a history's (`messages`, oldest first) refused turns; a sub-agent's message goes with the thread's before it. */
function refusedIn(messages: readonly StoredMessage[]): Set<number> {
  const out = new Set<number>();
  if (!messages.some((m) => m.stopReason === "refusal")) return out;
  const thread = messages.filter((m) => !isAgentSegment(m));
  const dropped = new Set([...refusedTurns(thread, true)].map((i) => thread[i].seq));
  let afterDropped = false;
  for (const m of messages) {
    if (!isAgentSegment(m)) afterDropped = dropped.has(m.seq);
    if (afterDropped) out.add(m.seq);
  }
  return out;
}

/** A person's prompt in the master's thread: a turn starts there. */
const opensTurn = (m: StoredMessage, head: RefusalHead) =>
  isPrompt(m) && !isAgentSegment(m) && !supersededBy(head, m.seq);

/**
 * The seqs the turns `run` (consecutive messages, oldest first) touches span, from its first's prompt
 * to the next turn's prompt (or the last message); null when no refused reply lies in them. Decided
 * per turn, however long: a turn's bounds are found by the store's user messages (userSeqs), its
 * refusal by an index lookup, so a turn without one is never read.
 */
function refusedSpan(store: RefusalStore, head: RefusalHead, run: readonly StoredMessage[]) {
  if (!store.refusalBetween(1, Number.MAX_SAFE_INTEGER)) return null;
  const first = run[0].seq;
  const from = opensTurn(run[0], head) ? first : (nearestPrompt(store, head, { seq: first, back: true }) ?? 1);
  const to = nearestPrompt(store, head, { seq: run[run.length - 1].seq + 1, back: false }) ?? store.lastSeq();
  return store.refusalBetween(from, to) ? { from, to } : null;
}

/** The seq of the nearest message from `seq` on (back to the first, or on to the last) that opens a turn; null when none does. */
function nearestPrompt(store: RefusalStore, head: RefusalHead, { seq, back }: { seq: number; back: boolean }) {
  for (let at = seq; ; ) {
    const seqs = userSeqs(
      store,
      back ? { fromSeq: 1, toSeq: at, back } : { fromSeq: at, toSeq: store.lastSeq(), back },
    );
    for (const s of seqs) {
      const [m] = supersededBy(head, s) ? [] : store.range(s, s);
      if (m && opensTurn(m, head)) return s;
    }
    if (!seqs.length) return null;
    at = back ? seqs[seqs.length - 1] - 1 : seqs[seqs.length - 1] + 1;
  }
}

/** The store's userSeqs, or (a plain list of messages) its user messages' seqs in the same order. */
function userSeqs(store: RefusalStore, q: { fromSeq: number; toSeq: number; back: boolean }): number[] {
  if (store.userSeqs) return store.userSeqs(q);
  const seqs = store
    .range(q.fromSeq, q.toSeq)
    .filter((m) => m.role === "user")
    .map((m) => m.seq);
  return q.back ? seqs.reverse() : seqs;
}

/** No tokens of any kind: a part that writes no ledger row. */
const spentNothing = (u: Usage): boolean =>
  !(u.input_tokens || u.output_tokens || u.cache_read_input_tokens || u.cache_creation_input_tokens);
