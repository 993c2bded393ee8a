// The conversation's record as this object holds it: loading and rebuilding from R2, creating,
// serialized head writes, and appends (R2 first, then the SQLite index, then the replay cache).
import { sortableId } from "../../core/ids";
import type { ModelEntry } from "../../core/models/catalog";
import { findModel } from "../../core/models/lookup";
import { settingsOnModel, withMissingSettings } from "../../core/settings";
import type { NewMessage, StoredMessage } from "../../core/types";
import { toolRegistry } from "../../agent/tools";
import type { ToolRegistry } from "../../agent/tools/registry";
import type {
  ConversationHead,
  ConversationRef,
  ConversationView,
  SupersededRange,
} from "../../services/record/conversation-head";
import { withSuperseded } from "./regenerate";
import { readBatchesAfter, readHead, writeBatch, writeHead } from "../../services/record/r2-record";
import { conversationPrefix } from "../../r2-layout";
import { deleteR2Prefix } from "../../services/purge";
import { ConversationGone } from "./conversation-delete";
import type { IndexOutbox } from "./index-outbox";
import type { ObjectScope } from "./object-scope";
import { replayChars, type ReplayCache } from "./replay-cache";

export type HeadInit = {
  title: string;
  settings: ConversationHead["settings"];
  projectId?: string | null;
  /** The title is the caller's own (given at create): never replaced by the automatic one. */
  titledByUser?: boolean;
};
export type HeadChange<T> = (head: ConversationHead) => { next: ConversationHead | null; result: T };

export class ConversationRecord {
  private current: ConversationHead | undefined;
  private loading: Promise<ConversationHead | null> | null = null;
  private headWrites: Promise<unknown> = Promise.resolve();
  /** The create under way, if any (`filling`: an import's, its transcript before its head), and its end. */
  private creating: { ref: ConversationRef; filling: boolean; done: Promise<unknown> } | null = null;
  /**
   * A batch write failed after retries: its bytes may have landed all the same (an answer lost,
   * then an outage). The next append adopts from R2 before it numbers anything, so a landed batch
   * is taken into the index instead of its seqs being handed out again.
   */
  private unsure = false;

  constructor(
    private readonly scope: ObjectScope,
    private readonly cache: ReplayCache,
    private readonly outbox: IndexOutbox,
  ) {}

  /** The loaded head; undefined until the first successful load (and again after a delete). */
  get head(): ConversationHead | undefined {
    return this.current;
  }

  /** Drops the in-memory copies (head, replay cache). */
  forget(): void {
    this.current = undefined;
    this.cache.forget();
  }

  /**
   * The head if this conversation exists for this tenant; null otherwise (never another tenant's).
   * Every entry point of the object goes through here: another tenant sees nothing.
   */
  async load(ref: ConversationRef): Promise<ConversationHead | null> {
    const { deletion } = this.scope;
    if (deletion.deleted) return null;
    // A conversation being created (an import's batches, a head being written) is listed already:
    // every caller waits for the create's end, so it answers whole or as never made, never half.
    const creating = this.creating;
    if (creating && sameConversation(creating.ref, ref)) {
      await creating.done;
      if (deletion.deleted) return null;
    }
    if (!this.current) {
      // Callers share a load in flight. A failed lookup is never cached, and a caller whose
      // shared load found nothing (it ran with another caller's ref) tries with its own.
      this.loading ??= this.loadOnce(ref).finally(() => (this.loading = null));
      const found = (await this.loading) ?? (this.current ? null : await this.loadOnce(ref));
      if (found) this.current ??= found;
    }
    const head = this.current;
    if (!head || deletion.deleted || head.tenantId !== ref.tenantId || head.id !== ref.conversationId) return null;
    return head;
  }

  private async loadOnce(ref: ConversationRef): Promise<ConversationHead | null> {
    const { store } = this.scope;
    const local = normalizeHead(store.getHead());
    if (local) {
      // Keys come from the stored head, so this is safe whoever the caller is.
      await this.adoptBatchesFromR2(local);
      this.zeroSuperseded(local);
      return local;
    }
    const head = normalizeHead(await readHead(this.scope.env.BUCKET, ref.tenantId, ref.conversationId));
    if (!head) return null;
    await this.adoptBatchesFromR2(head);
    this.zeroSuperseded(head);
    store.putHead(head);
    return head;
  }

  /** An index rebuilt from R2 weighs superseded messages as any other: they weigh nothing. */
  private zeroSuperseded(head: ConversationHead): void {
    for (const r of head.superseded ?? []) this.scope.store.zeroChars(r.fromSeq, r.toSeq);
  }

  /**
   * Marks an exchange superseded (a regenerate replaced it; its ranges in one head write): the head
   * first (R2, then SQLite), then its messages weigh nothing and the replay cache is read again
   * without them. Nothing is removed.
   */
  async supersede(ranges: readonly SupersededRange[]): Promise<void> {
    await this.updateHead((h) => ({ next: withSuperseded(h, ranges), result: undefined }));
    for (const range of ranges) this.scope.store.zeroChars(range.fromSeq, range.toSeq);
    // A fold still holding an (expired) lease may have taken its region before the exchange was
    // replaced: its summary could tell the replaced reply, so its commit is refused as stale.
    this.scope.store.clearLease();
    this.cache.forget();
  }

  /**
   * Adopts R2 batches the index does not have: all of them after a storage loss, or the one a
   * crash left between the R2 write and the index write. One listing per cold start.
   */
  private async adoptBatchesFromR2(head: ConversationHead): Promise<void> {
    const { ctx, store } = this.scope;
    const last = store.lastSeq();
    let adopted = false;
    for await (const batch of readBatchesAfter(this.scope.env.BUCKET, {
      tenantId: head.tenantId,
      conversationId: head.id,
      afterSeq: last,
    })) {
      const fresh = batch.messages.filter((m) => m.seq > store.lastSeq());
      if (!fresh.length) continue;
      ctx.storage.transactionSync(() => store.insertMessages(fresh, batch.key, replayChars));
      adopted = true;
    }
    this.cache.forget();
    // Adopted messages are indexed as appended ones are: the writer that stored them died first.
    if (adopted) this.outbox.remind();
  }

  /**
   * Whether an import of this conversation is being committed: listed, its head not yet written. A
   * delete then cuts it short (the commit's writes are refused, ConversationGone) instead of waiting
   * for the whole transcript to be written only to purge it.
   */
  committing(ref: ConversationRef): boolean {
    return !!this.creating?.filling && sameConversation(this.creating.ref, ref);
  }

  /**
   * Creates the head. `fill` (an import) writes the conversation's messages first: until the head
   * is written, nothing of it is visible to any RPC (`load` waits for it), so a refused or failed
   * fill, a failed head write after it, or a delete that cut it short, leaves nothing.
   */
  create(
    ref: ConversationRef,
    init: HeadInit,
    fill?: (head: ConversationHead) => Promise<void>,
  ): Promise<ConversationView> {
    const made = this.createOnce(ref, init, fill);
    const creating = { ref, filling: !!fill, done: made.catch(() => {}) };
    this.creating = creating;
    void creating.done.then(() => {
      if (this.creating === creating) this.creating = null;
    });
    return made;
  }

  private async createOnce(
    ref: ConversationRef,
    init: HeadInit,
    fill?: (head: ConversationHead) => Promise<void>,
  ): Promise<ConversationView> {
    const { deletion, store } = this.scope;
    if (store.getHead() || (await readHead(this.scope.env.BUCKET, ref.tenantId, ref.conversationId)))
      throw new Error(`conversation ${ref.conversationId} already exists`);
    const now = new Date().toISOString();
    const head: ConversationHead = {
      id: ref.conversationId,
      tenantId: ref.tenantId,
      title: init.title,
      settings: init.settings,
      createdAt: now,
      updatedAt: now,
      summary: null,
      summarizedThroughMessage: null,
      summarizedThroughMessageId: null,
      foldCount: 0,
      lastFoldAt: null,
      activeTools: [],
      projectId: init.projectId ?? null,
    };
    if (fill) {
      try {
        await fill(head);
        // Guarded as the batches are: a delete that began meanwhile awaits it before it purges.
        await deletion.guard(() => writeHead(this.scope.env.BUCKET, head));
      } catch (err) {
        // No head is known to be written, so nothing is visible: what the fill wrote must not linger
        // (nor a head whose answer was lost: the conversation prefix goes whole). A delete that cut
        // it short empties the storage itself (deleteAll), which is not to be touched meanwhile.
        if (!(err instanceof ConversationGone)) store.clearMessages();
        await deleteR2Prefix(this.scope.env.BUCKET, conversationPrefix(ref.tenantId, ref.conversationId)).catch(
          (cleanup) => console.error("import cleanup failed", cleanup),
        );
        throw err;
      }
    } else await writeHead(this.scope.env.BUCKET, head);
    store.putHead(head);
    // In the head's own storage write (no await between): no turn sees the head without it, so the
    // automatic title never takes a title the caller chose, "New conversation" included (auto-title.ts).
    if (init.titledByUser) store.setTitleSource("user");
    this.current = head;
    if (fill) this.cache.forget();
    else this.cache.startEmpty();
    return this.view(head);
  }

  view(head: ConversationHead): ConversationView {
    const { tenantId: _tenant, ...rest } = head;
    // seq runs 1..n without gaps, so the last seq is the count (an index lookup, not a scan).
    const lastSeq = this.scope.store.lastSeq();
    const lease = this.scope.store.getLease();
    return {
      ...rest,
      messageCount: lastSeq,
      lastSeq,
      unsummarizedChars: this.cache.unsummarizedChars(head),
      foldableChars: this.cache.foldableChars(head),
      foldInFlight: !!lease && lease.expiresAt > Date.now(),
    };
  }

  /**
   * Head changes (patches, fold commits, tool activations) run one at a time against the freshest
   * head, so a patch landing during a fold's R2 write is never overwritten by a stale copy. R2
   * first (the record), then SQLite, then memory.
   */
  updateHead<T>(change: HeadChange<T>): Promise<T> {
    const { deletion, store } = this.scope;
    const run = this.headWrites.then(async () => {
      if (deletion.deleted) throw new ConversationGone();
      const { next, result } = change(this.current!);
      if (next) {
        await deletion.guard(() => writeHead(this.scope.env.BUCKET, next));
        store.putHead(next);
        this.current = next;
      }
      return result;
    });
    this.headWrites = run.catch(() => {});
    return run;
  }

  /**
   * Attachments are lifecycle events that activate the tools for their kind (never a keyword); a
   * turn may name tools to activate, its tenant's among them (`known`: the turn's registry).
   */
  async activateTools(tools: readonly string[], known: Pick<ToolRegistry, "get"> = toolRegistry): Promise<void> {
    // A deleted conversation has no head: updateHead below says so (ConversationGone).
    const missing = tools.filter((t) => known.get(t) && !this.current?.activeTools.includes(t));
    if (missing.length)
      await this.updateHead((h) => ({
        next: {
          ...h,
          activeTools: [...new Set([...h.activeTools, ...missing])].sort(),
          updatedAt: new Date().toISOString(),
        },
        result: undefined,
      }));
  }

  /**
   * The conversation moves to another model (its own retired): the settings that followed the old
   * model's defaults follow the new one's, and the rest are cleaned up as a PATCH cleans them
   * (core/settings.ts settingsOnModel: a fallback that is the new model goes, a reserve the window
   * no longer holds becomes the new model's). Only while
   * the head is still on the retired model (`retired`; not given: a model the catalog does not list
   * as current), in the serialized head write: a model the user chose after the turn read the head
   * (a PATCH in between) is never overwritten. True when it moved.
   */
  async moveToModel(entry: ModelEntry, retired?: string): Promise<boolean> {
    return this.updateHead((h) => {
      const model = h.settings.model;
      const still =
        retired !== undefined ? model === retired : model !== entry.id && findModel(model).kind !== "current";
      if (!still) return { next: null, result: false };
      return {
        next: {
          ...h,
          settings: settingsOnModel(h.settings, { patch: { model: entry.id }, from: null, to: entry }),
          updatedAt: new Date().toISOString(),
        },
        result: true,
      };
    });
  }

  /** Takes into the index a batch that may have landed unseen (see `unsure`) before the store is read for a decision. */
  async settle(): Promise<void> {
    if (!this.unsure || !this.current) return;
    await this.adoptBatchesFromR2(this.current);
    this.unsure = false;
  }

  /**
   * Appends one batch: R2 first (the record), then the SQLite index, then the hot cache, so a
   * message is visible in the index only after its R2 batch exists. Called only inside the turn
   * chain (or its attachment notes): seq stays contiguous from 1, never assigned concurrently.
   */
  async append(messages: NewMessage[]): Promise<StoredMessage[]> {
    const { ctx, deletion, store } = this.scope;
    if (deletion.deleted) throw new ConversationGone();
    const head = this.current!;
    await this.settle();
    const first = store.lastSeq() + 1;
    const createdAt = new Date().toISOString();
    const stored: StoredMessage[] = messages.map((m, i) =>
      storedMessage(m, { id: sortableId("msg"), seq: first + i, createdAt }),
    );
    let key: string;
    try {
      key = await deletion.guard(() => writeBatch(this.scope.env.BUCKET, head, stored));
    } catch (err) {
      this.unsure = true;
      throw err;
    }
    try {
      ctx.storage.transactionSync(() => store.insertMessages(stored, key, replayChars));
    } catch (err) {
      // The batch is in R2 but not in the index: restart so the next load adopts it from R2
      // instead of handing out its seqs again.
      ctx.abort("index write failed after the R2 write");
      throw err;
    }
    store.touchActivity(createdAt);
    this.cache.appended(stored);
    this.outbox.remind();
    return stored;
  }
}

/** One batch of an import, already numbered: R2 first, then the index (the head comes after all of them). */
export async function writeImportedBatch(
  scope: ObjectScope,
  head: ConversationHead,
  stored: readonly StoredMessage[],
): Promise<void> {
  const key = await scope.deletion.guard(() => writeBatch(scope.env.BUCKET, head, stored));
  scope.ctx.storage.transactionSync(() => scope.store.insertMessages(stored, key, replayChars));
}

const sameConversation = (a: ConversationRef, b: ConversationRef): boolean =>
  a.tenantId === b.tenantId && a.conversationId === b.conversationId;

/** A stored message's fields in the one order every writer uses, so records compare byte for byte. */
export function storedMessage(m: NewMessage, at: { id: string; seq: number; createdAt: string }): StoredMessage {
  const { id, seq, createdAt } = at;
  return { id, seq, role: m.role, content: m.content, createdAt, ...extras(m) };
}

function extras(m: NewMessage): Partial<StoredMessage> {
  const out: Partial<StoredMessage> = {};
  if (m.usage) out.usage = m.usage;
  if (m.model) out.model = m.model;
  if (m.stopReason !== undefined) out.stopReason = m.stopReason;
  if (m.thinkingPrefixes) out.thinkingPrefixes = m.thinkingPrefixes;
  if (m.betweenToolsEffort) out.betweenToolsEffort = m.betweenToolsEffort;
  if (m.agent) out.agent = m.agent;
  return out;
}

/** Heads written before a field existed get its default, so every head has one shape. */
function normalizeHead(head: ConversationHead | null): ConversationHead | null {
  return head
    ? {
        ...head,
        settings: withMissingSettings(head.settings),
        foldCount: head.foldCount ?? 0,
        lastFoldAt: head.lastFoldAt ?? null,
        activeTools: head.activeTools ?? [],
        projectId: head.projectId ?? null,
      }
    : null;
}
