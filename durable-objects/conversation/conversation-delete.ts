// Deleting a conversation inside its Durable Object: a user's explicit, irreversible removal of
// every byte and index row it owns. The order makes a delete cut short resumable:
// 1. a tombstone in the object's storage: from then on every RPC answers as for a nonexistent
//    conversation, and writes that could put data back (R2 batches, the head, prompt snapshots,
//    cortex rows) are refused through `guard`;
// 2. the sockets closed; its cortex rows and listing row go (unlistConversation): search and the
//    listings read without the object, and must not find it while the next step waits;
// 3. the writes already in flight are awaited;
// 4. the usage rows the outbox still holds go to the ledger (it outlives the conversation), rows
//    metered until that read included (see `outboxFlushedLater`); R2 and D1 are purged
//    (services/conversation-purge.ts, each step idempotent, the cortex and listing rows again:
//    a write awaited in 3 may have put some back);
// 5. the alarm and the object's storage go (deleteAll), tombstone included.
// A crash between 1 and 5 leaves the tombstone and an alarm that finishes the purge; a DELETE
// sent again joins or resumes it. A queued fold or extract job arriving later finds nothing.
import type { ConversationRef } from "../../services/record/conversation-head";
import { type PurgeTarget, purgeConversation, unlistConversation } from "../../services/conversation-purge";

/** How soon an interrupted purge is picked up again by the alarm. */
const RESUME_AFTER_MS = 30_000;
/** Close code for sockets of a deleted conversation (application range 4000-4999). */
export const DELETED_CLOSE_CODE = 4404;

/** Thrown by a guarded write once the conversation is being deleted. */
export class ConversationGone extends Error {
  constructor() {
    super("conversation deleted");
    this.name = "ConversationGone";
  }
}

/**
 * An RPC's answer when a delete that began under it refused its write (ConversationGone): the
 * conversation's "missing", as for one that never existed, never an error (a 500 at the route).
 */
export async function missingIfGone<T>(run: Promise<T>): Promise<T | { kind: "missing" }> {
  try {
    return await run;
  } catch (err) {
    if (err instanceof ConversationGone) return { kind: "missing" };
    throw err;
  }
}

interface Tombstone {
  tenantId: string;
  conversationId: string;
  at: string;
  /** The title the purge read as its listing row went: a resumed purge forgets only the maps naming it. */
  title?: string;
}

export interface DeletionHooks {
  /** The object's bindings, read at use (tests swap them on the live object). */
  env(): Env;
  /** Drops the object's in-memory copies (head, replay cache). */
  forget(): void;
  /** Recreates the empty schema after deleteAll, so the object stays usable as a fresh one. */
  ensureSchema(): void;
  /** Writes what the ledger is still owed (the outbox's usage rows) before the storage goes. */
  flushUsage(tenantId: string): Promise<void>;
}

export class ConversationDeletion {
  /** Set once a delete began in this instance; survives the purge, unlike the tombstone. */
  private gone = false;
  /** The tombstone this instance wrote or resumed, until its purge completes. */
  private current: Tombstone | null = null;
  private purging: Promise<void> | null = null;
  /** The purge has read the outbox's usage rows to send them: a row put there now could be wiped unsent. */
  private usageRead = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly hooks: DeletionHooks,
  ) {}

  /** The tombstone of a delete not yet completed, if any. */
  tombstone(): Tombstone | null {
    // Once gone, storage is not read: deleteAll may be dropping its tables right now.
    if (this.gone) return this.current;
    const row = this.ctx.storage.sql
      .exec<{ value: string }>(`SELECT value FROM kv WHERE key = 'tombstone'`)
      .toArray()[0];
    return row ? (JSON.parse(row.value) as Tombstone) : null;
  }

  get deleted(): boolean {
    return this.gone || this.tombstone() !== null;
  }

  /**
   * Whether a usage row put in the outbox now still reaches the ledger through the delete: the
   * tombstone's storage is kept and its purge has not read the outbox yet (a purge that stopped
   * short reads it again when resumed). Otherwise the row must go to D1 itself (index-outbox.ts).
   */
  get outboxFlushedLater(): boolean {
    return !this.usageRead && this.tombstone() !== null;
  }

  /**
   * Runs a write that would put the conversation's data back (R2, D1). Refused once a delete
   * began; one already running is awaited by the purge, and its caller gets ConversationGone
   * if the delete began meanwhile, so it touches nothing further.
   */
  guard<T>(write: () => Promise<T>): Promise<T> {
    if (this.deleted) return Promise.reject(new ConversationGone());
    const run = write().then((value) => {
      if (this.gone) throw new ConversationGone();
      return value;
    });
    const tracked = run.catch(() => {});
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return run;
  }

  /** Starts the delete (or joins or resumes one) and resolves once everything is gone. */
  delete(ref: ConversationRef): Promise<void> {
    if (!this.purging) {
      this.current = this.tombstone() ?? {
        tenantId: ref.tenantId,
        conversationId: ref.conversationId,
        at: new Date().toISOString(),
      };
      this.ctx.storage.sql.exec(
        `INSERT OR REPLACE INTO kv (key, value) VALUES ('tombstone', ?)`,
        JSON.stringify(this.current),
      );
    }
    this.gone = true;
    this.hooks.forget();
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.close(DELETED_CLOSE_CODE, "conversation deleted");
      } catch {
        // already closed
      }
    }
    this.purging ??= this.purge(this.current!).finally(() => (this.purging = null));
    return this.purging;
  }

  /** Keeps in the tombstone the title its purge read, for a resumed purge. */
  private keepTitle(title: string): void {
    if (!this.current) return;
    this.current = { ...this.current, title };
    this.ctx.storage.sql.exec(
      `INSERT OR REPLACE INTO kv (key, value) VALUES ('tombstone', ?)`,
      JSON.stringify(this.current),
    );
  }

  /** The alarm's part: finishes a delete a crash interrupted. */
  async resume(): Promise<boolean> {
    const tomb = this.tombstone();
    if (!tomb) return false;
    await this.delete(tomb);
    return true;
  }

  /** What the purge's steps are told: the title as the tombstone keeps it now (an earlier step may have read it). */
  private target(ref: Tombstone): PurgeTarget {
    return {
      tenantId: ref.tenantId,
      conversationId: ref.conversationId,
      title: this.current?.title ?? ref.title,
      keepTitle: (title) => this.keepTitle(title),
    };
  }

  private async purge(ref: Tombstone): Promise<void> {
    this.usageRead = false;
    // Set first: a purge cut short anywhere after (in the next step too) is resumed by it.
    await this.ctx.storage.setAlarm(Date.now() + RESUME_AFTER_MS);
    // Before the writes in flight are awaited (a message batch, an index write can take a while):
    // search and the listings find the conversation no more than its own routes do.
    await unlistConversation(this.hooks.env(), this.target(ref));
    await Promise.all([...this.inFlight]);
    // The flag and the hook's read of the outbox in one synchronous step: no row slips between them.
    this.usageRead = true;
    try {
      await this.hooks.flushUsage(ref.tenantId);
      await purgeConversation(this.hooks.env(), this.target(ref));
    } catch (err) {
      // The purge stops short with the storage kept: later rows wait in the outbox for its resume.
      this.usageRead = false;
      throw err;
    }
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.current = null;
    this.hooks.ensureSchema();
  }
}
