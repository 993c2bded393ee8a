// What every part of the conversation object shares: its state, its SQLite and its deletion guard,
// and its bindings, read at each use so a binding swapped on the live object is seen at once.
import { type CortexMark, laterMark } from "../../services/cortex/shard";
import type { ConversationDeletion } from "./conversation-delete";
import type { ConversationStore } from "./conversation-store";

export interface ObjectScope {
  readonly ctx: DurableObjectState;
  /** A getter on the object, never a copy. */
  readonly env: Env;
  readonly store: ConversationStore;
  /** Explicit deletion: the tombstone, the guard on writes that could bring data back, the purge. */
  readonly deletion: ConversationDeletion;
  /**
   * Where the tenant's cortex shard was after this object's last index write (its D1 bookmark), and
   * which shard: the turn's searches start their read session there, so they see what the object
   * indexed. A bookmark of another shard (the tenant moved since) means nothing to the new one.
   */
  cortexBookmark: { shard: string; bookmark: string } | null;
}

/**
 * The object's read bookmark after one of its shard writes (`mark`; null: it wrote none): an index
 * write (index-outbox.ts), a note tool's (tool-context.ts), a dropped exchange's note deletes
 * (regenerate.ts): services/cortex/shard.ts laterMark, so never back on one shard (another write that
 * landed meanwhile may be further on), and another shard's replaces it.
 */
export function moveCortexBookmark(scope: Pick<ObjectScope, "cortexBookmark">, mark: CortexMark | null): void {
  scope.cortexBookmark = laterMark(scope.cortexBookmark, mark);
}
