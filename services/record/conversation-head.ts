// The conversation head: metadata, settings and the rolling-summary fields. Persisted as R2's
// head.json (the record) and mirrored in the Durable Object's SQLite (the hot copy).
import type { Settings } from "../../core/settings";

export interface ConversationHead {
  id: string;
  tenantId: string;
  title: string;
  settings: Settings;
  createdAt: string;
  updatedAt: string;
  /** The one rolling summary of everything before summarizedThroughMessageId (null until a fold). */
  summary: string | null;
  /** Seq of the last message the summary covers. */
  summarizedThroughMessage: number | null;
  /** Id of the first message the summary does NOT cover: the first message of the verbatim tail. */
  summarizedThroughMessageId: string | null;
  /**
   * The seq through which stale tool results were stubbed when the last fold committed: the tail
   * keeps them stubbed, so a fold never brings one back whole (core/stubs.ts StubInput). Absent
   * before the first fold (and on heads folded before 2026-12-06: their tails stub as before).
   */
  stubbedThroughMessage?: number;
  /** Folds committed so far (each one model call), and when the last one landed. */
  foldCount: number;
  lastFoldAt: string | null;
  /** Non-core tools activated with tool_activate: their schemas ride every later request. */
  activeTools: string[];
  /** The project whose files this conversation sees (by name and facts), if any. */
  projectId: string | null;
  /**
   * Exchanges a regenerate replaced (durable-objects/conversation/regenerate.ts): their messages
   * stay in the transcript, R2 and the index, and are never replayed or folded. Absent until the
   * first regenerate.
   */
  superseded?: SupersededRange[];
  /**
   * Set on a conversation created by an import: the seq of the transcript's last message. Those
   * messages go back to the model without the blocks the API sealed for whoever ran them (thinking,
   * server tool blocks, citations: core/replay-rules.ts); the record keeps them.
   */
  importedThroughMessage?: number;
}

/** The messages `fromSeq`..`toSeq` were replaced by the exchange whose user message is `by`. */
export interface SupersededRange {
  fromSeq: number;
  toSeq: number;
  /** The id of the user message that replaced them (the prompt, saved again). */
  by: string;
}

/** What GET /v1/conversations/:id returns. */
export interface ConversationView extends Omit<ConversationHead, "tenantId"> {
  messageCount: number;
  lastSeq: number;
  /** Replay chars after the fold boundary: what the fold threshold is compared with. */
  unsummarizedChars: number;
  /** The part of it a fold now would fold (everything before the kept tail): the threshold's measure. */
  foldableChars: number;
  foldInFlight: boolean;
}

export interface ConversationRef {
  tenantId: string;
  conversationId: string;
}
