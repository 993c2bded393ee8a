// The ConversationDO's SQLite: the hot index of the conversation. Everything here can be rebuilt
// from R2 (see r2-layout/README.md); the schema is versioned and created idempotently.
import { utcDay } from "../../core/models/lookup";
import type { StoredMessage, Usage } from "../../core/types";
import type { ConversationHead } from "../../services/record/conversation-head";

/** Schema steps, applied in order and recorded in kv.schema_version; append only. */
const SCHEMA_STEPS: string[][] = [
  [
    `CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      created_at TEXT NOT NULL,
      chars INTEGER NOT NULL,
      extra TEXT,
      batch_key TEXT NOT NULL
    )`,
  ],
  [`CREATE TABLE IF NOT EXISTS outbox (key TEXT PRIMARY KEY, payload TEXT NOT NULL)`],
  [
    `CREATE TABLE IF NOT EXISTS prompt_snapshots (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      step INTEGER NOT NULL,
      messages INTEGER NOT NULL,
      chars INTEGER NOT NULL,
      estimate_tokens INTEGER NOT NULL,
      reported_tokens INTEGER,
      budget_tokens INTEGER NOT NULL,
      compacted INTEGER NOT NULL
    )`,
  ],
  [
    `CREATE TABLE IF NOT EXISTS timeline (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, after_seq INTEGER NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL)`,
  ],
  // A message whose content passes PART_CHARS (a tool's 1 MB answer, several in one step) is kept
  // in parts: a Durable Object's SQLite refuses any value or row over 2 MB.
  [
    `CREATE TABLE IF NOT EXISTS message_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (seq, part))`,
  ],
  // The refused replies: whether any lies near a batch the index outbox labels is one index lookup
  // (refusalBetween), so a batch of a turn without one never reads the turn's earlier messages.
  [
    `CREATE INDEX IF NOT EXISTS messages_refusals ON messages(seq) WHERE json_extract(extra, '$.stopReason') = 'refusal'`,
  ],
  // What a snapshot's count was measured over (contentFingerprint of its messages): the next turn
  // carries the count only to a request that starts with the same content. Earlier rows stay NULL.
  [`ALTER TABLE prompt_snapshots ADD COLUMN prefix TEXT`],
];

/** UTF-16 units per stored part: at most 3 UTF-8 bytes each, so a part stays under 1.5 MB. */
export const PART_CHARS = 500_000;
/** The content column of a message kept in parts (JSON text is never empty). */
const IN_PARTS = "";

export const PROMPT_SNAPSHOTS_KEPT = 50;

/**
 * The stored JSON (UTF-8 bytes) one transcript page carries at most; a message larger alone is a
 * page of its own. A page crosses RPC, whose values Workers caps at 32 MiB serialized: a string
 * serializes in at most 2 bytes per UTF-16 unit, never more than twice its UTF-8 bytes, so a page
 * stays under 24 MiB (27 MiB were it all numbers: 9 bytes each, against at least 4 chars of JSON).
 */
export const TRANSCRIPT_PAGE_BYTES = 12 * 1024 * 1024;
/** What a message weighs beyond its content and extras: id, role, seq, createdAt, supersede marks. */
const MESSAGE_OVERHEAD_BYTES = 256;

/** A card of the conversation's timeline (e.g. a compaction): shown in History, never replayed. */
/** conversation-store.ts setUnmarkedCopy: a regenerate's copy at `copySeq` replacing fromSeq..toSeq. */
export interface UnmarkedCopy {
  copySeq: number;
  fromSeq: number;
  toSeq: number;
}

export interface TimelineCard {
  id: number;
  at: string;
  /** The last message seq when the card was made: where it sits among the messages. */
  afterSeq: number;
  type: string;
  card: unknown;
}

export interface PromptSnapshot {
  id: number;
  at: string;
  turnId: string;
  step: number;
  messages: number;
  chars: number;
  estimateTokens: number;
  reportedTokens: number | null;
  budgetTokens: number;
  compacted: boolean;
  /** core/compactor.ts contentFingerprint of its messages; null on rows written before it was kept. Internal. */
  prefix?: string | null;
}

interface MessageRow extends Record<string, SqlStorageValue> {
  seq: number;
  id: string;
  role: string;
  content: string;
  created_at: string;
  extra: string | null;
}

/** The fold in flight: at most one per conversation; an expired lease lets a later turn dispatch again. */
export interface FoldLease {
  jobId: string;
  dispatchedAt: number;
  expiresAt: number;
}

export class ConversationStore {
  constructor(private readonly sql: SqlStorage) {}

  ensureSchema(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const version = Number(this.getKv("schema_version") ?? 0);
    for (let step = version; step < SCHEMA_STEPS.length; step++) {
      for (const statement of SCHEMA_STEPS[step]) this.sql.exec(statement);
      this.setKv("schema_version", String(step + 1));
    }
  }

  private getKv(key: string): string | null {
    const row = this.sql.exec<{ value: string }>(`SELECT value FROM kv WHERE key = ?`, key).toArray()[0];
    return row ? row.value : null;
  }

  private setKv(key: string, value: string): void {
    this.sql.exec(
      `INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      key,
      value,
    );
  }

  getHead(): ConversationHead | null {
    const raw = this.getKv("head");
    return raw ? (JSON.parse(raw) as ConversationHead) : null;
  }

  putHead(head: ConversationHead): void {
    this.setKv("head", JSON.stringify(head));
  }

  indexedThrough(): number {
    return Number(this.getKv("indexed_through") ?? 0);
  }

  setIndexedThrough(seq: number): void {
    this.setKv("indexed_through", String(seq));
  }

  getLease(): FoldLease | null {
    const raw = this.getKv("fold_lease");
    return raw ? (JSON.parse(raw) as FoldLease) : null;
  }

  putLease(lease: FoldLease): void {
    this.setKv("fold_lease", JSON.stringify(lease));
  }

  clearLease(): void {
    this.sql.exec(`DELETE FROM kv WHERE key = 'fold_lease'`);
  }

  /**
   * A regenerate's copy whose superseded mark is not saved yet: where the copy goes (the next seq)
   * and the exchange it replaces. Left when the mark's head write fails, so a regenerate after it
   * can still tell the copy (regenerate.ts); cleared once the mark is saved.
   */
  setUnmarkedCopy(range: { fromSeq: number; toSeq: number } | null): void {
    if (!range) this.sql.exec(`DELETE FROM kv WHERE key = 'unmarked_copy'`);
    else this.setKv("unmarked_copy", JSON.stringify({ ...range, copySeq: this.lastSeq() + 1 }));
  }

  unmarkedCopy(): UnmarkedCopy | null {
    const raw = this.getKv("unmarked_copy");
    return raw ? (JSON.parse(raw) as UnmarkedCopy) : null;
  }

  /**
   * What the running turn part has spent so far, kept as its model calls report (turns run one at
   * a time): metered at the object's next start if the object dies before the part's own meter.
   */
  putSpending(spending: Omit<TurnSpending, "day">): void {
    // Never in a turn's way: storage a delete is removing may refuse the write.
    try {
      this.setKv("turn_spending", JSON.stringify({ ...spending, day: utcDay() }));
    } catch (err) {
      console.error("turn spending not kept", err);
    }
  }

  clearSpending(): void {
    try {
      this.sql.exec(`DELETE FROM kv WHERE key = 'turn_spending'`);
    } catch (err) {
      console.error("turn spending not cleared", err);
    }
  }

  /** The spending a dead incarnation left, taken (it is removed). */
  takeSpending(): TurnSpending | null {
    const raw = this.getKv("turn_spending");
    if (raw) this.clearSpending();
    return raw ? (JSON.parse(raw) as TurnSpending) : null;
  }

  /**
   * The conversation's last activity, what the listing's `updatedAt` shows and `?order=activity`
   * sorts by: when messages were last added (a turn, an import, an attachment note) or the user
   * last renamed it. Null on objects that predate it (the listing then falls back to the last message).
   * It only moves forward: a save stamped before a rename that landed during its R2 write keeps the rename's.
   */
  activityAt(): string | null {
    return this.getKv("activity_at");
  }
  touchActivity(at: string): void {
    if (at > (this.activityAt() ?? "")) this.setKv("activity_at", at);
  }

  /** Who the title is from: "user" once a PATCH set it, "auto" once the automatic title was tried (auto-title.ts); null before either. */
  titleSource(): "user" | "auto" | null {
    return this.getKv("title_source") as "user" | "auto" | null;
  }

  setTitleSource(source: "user" | "auto"): void {
    this.setKv("title_source", source);
  }

  /** Work for D1 that must survive a failed attempt (e.g. fold episodes), drained by the indexer. */
  putOutbox(key: string, payload: unknown): void {
    this.sql.exec(`INSERT OR REPLACE INTO outbox (key, payload) VALUES (?, ?)`, key, JSON.stringify(payload));
  }

  outbox(): { key: string; payload: unknown }[] {
    return this.sql
      .exec<{ key: string; payload: string }>(`SELECT key, payload FROM outbox ORDER BY key`)
      .toArray()
      .map((r) => ({ key: r.key, payload: JSON.parse(r.payload) }));
  }

  deleteOutbox(key: string): void {
    this.sql.exec(`DELETE FROM outbox WHERE key = ?`, key);
  }

  addCard(type: string, card: unknown): void {
    this.sql.exec(
      `INSERT INTO timeline (at, after_seq, type, payload) VALUES (?, ?, ?, ?)`,
      new Date().toISOString(),
      this.lastSeq(),
      type,
      JSON.stringify(card),
    );
  }

  cards(after: number, limit: number): TimelineCard[] {
    return this.sql
      .exec<{ id: number; at: string; after_seq: number; type: string; payload: string }>(
        `SELECT * FROM timeline WHERE id > ? ORDER BY id LIMIT ?`,
        after,
        limit,
      )
      .toArray()
      .map((r) => ({ id: r.id, at: r.at, afterSeq: r.after_seq, type: r.type, card: JSON.parse(r.payload) }));
  }

  /** Records a snapshot and returns its id and the ids rotated out (beyond the newest 50). */
  addSnapshot(s: Omit<PromptSnapshot, "id">): { id: number; dropped: number[] } {
    const id = this.sql
      .exec<{ id: number }>(
        `INSERT INTO prompt_snapshots (at, turn_id, step, messages, chars, estimate_tokens, reported_tokens, budget_tokens, compacted, prefix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        s.at,
        s.turnId,
        s.step,
        s.messages,
        s.chars,
        s.estimateTokens,
        s.reportedTokens,
        s.budgetTokens,
        s.compacted ? 1 : 0,
        s.prefix ?? null,
      )
      .one().id;
    const dropped = this.sql
      .exec<{ id: number }>(`DELETE FROM prompt_snapshots WHERE id <= ? RETURNING id`, id - PROMPT_SNAPSHOTS_KEPT)
      .toArray()
      .map((r) => r.id);
    return { id, dropped };
  }

  /** Newest first, those older than `before` when given. */
  snapshots(limit: number, before = Number.MAX_SAFE_INTEGER): PromptSnapshot[] {
    return this.sql
      .exec<Record<string, SqlStorageValue>>(
        `SELECT * FROM prompt_snapshots WHERE id < ? ORDER BY id DESC LIMIT ?`,
        before,
        limit,
      )
      .toArray()
      .map((r) => ({
        id: r.id as number,
        at: r.at as string,
        turnId: r.turn_id as string,
        step: r.step as number,
        messages: r.messages as number,
        chars: r.chars as number,
        estimateTokens: r.estimate_tokens as number,
        reportedTokens: (r.reported_tokens as number | null) ?? null,
        budgetTokens: r.budget_tokens as number,
        compacted: r.compacted === 1,
        prefix: (r.prefix as string | null) ?? null,
      }));
  }

  /** Superseded messages are never replayed: they weigh nothing towards the fold threshold. */
  zeroChars(fromSeq: number, toSeq: number): void {
    this.sql.exec(`UPDATE messages SET chars = 0 WHERE seq BETWEEN ? AND ?`, fromSeq, toSeq);
  }

  /** Replay chars of every message after `seq`: the unsummarized region when `seq` is the fold boundary. */
  charsAfter(seq: number): number {
    return this.sql.exec<{ c: number }>(`SELECT COALESCE(SUM(chars), 0) AS c FROM messages WHERE seq > ?`, seq).one().c;
  }

  lastSeq(): number {
    return this.sql.exec<{ s: number | null }>(`SELECT MAX(seq) AS s FROM messages`).one().s ?? 0;
  }

  insertMessages(messages: readonly StoredMessage[], batchKey: string, chars: (m: StoredMessage) => number): void {
    for (const m of messages) {
      const { id, seq, role, content, createdAt, ...extra } = m;
      const json = JSON.stringify(content);
      const parts = json.length > PART_CHARS ? splitParts(json) : null;
      parts?.forEach((body, part) =>
        this.sql.exec(`INSERT INTO message_parts (seq, part, body) VALUES (?, ?, ?)`, seq, part, body),
      );
      this.sql.exec(
        `INSERT INTO messages (seq, id, role, content, created_at, chars, extra, batch_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        seq,
        id,
        role,
        parts ? IN_PARTS : json,
        createdAt,
        chars(m),
        Object.keys(extra).length ? JSON.stringify(extra) : null,
        batchKey,
      );
    }
  }

  /** Only for an import that failed before its head was written (nothing of it was ever visible). */
  clearMessages(): void {
    this.sql.exec(`DELETE FROM messages`);
    this.sql.exec(`DELETE FROM message_parts`);
  }

  /** Messages with seq > after, oldest first. */
  listAfter(after: number, limit: number): StoredMessage[] {
    return this.sql
      .exec<MessageRow>(
        `SELECT seq, id, role, content, created_at, extra FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`,
        after,
        limit,
      )
      .toArray()
      .map((row) => this.toMessage(row));
  }

  /**
   * A transcript page: messages with seq > after (and <= `through`, when given), oldest first, at
   * most `limit` of them and no more than `maxBytes` of stored JSON (TRANSCRIPT_PAGE_BYTES), but
   * never none while one is left. `more`: messages after the page remain (up to `through`),
   * whichever bound ended it. Sizes are read first, so no message beyond the page is ever loaded whole.
   */
  transcriptPage(
    after: number,
    {
      limit,
      maxBytes = TRANSCRIPT_PAGE_BYTES,
      through = Number.MAX_SAFE_INTEGER,
    }: { limit: number; maxBytes?: number; through?: number },
  ): { messages: StoredMessage[]; more: boolean } {
    const sizes = this.sql
      .exec<{ seq: number; bytes: number }>(
        `SELECT seq, COALESCE(length(CAST(extra AS BLOB)), 0) + CASE WHEN content = ?
           THEN (SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) FROM message_parts p WHERE p.seq = messages.seq)
           ELSE length(CAST(content AS BLOB)) END AS bytes
         FROM messages WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
        IN_PARTS,
        after,
        through,
        limit + 1,
      )
      .toArray();
    let taken = 0;
    let bytes = 0;
    while (taken < Math.min(limit, sizes.length)) {
      bytes += sizes[taken].bytes + MESSAGE_OVERHEAD_BYTES;
      if (taken > 0 && bytes > maxBytes) break;
      taken++;
    }
    const messages = taken ? this.range(sizes[0].seq, sizes[taken - 1].seq) : [];
    return { messages, more: taken < sizes.length };
  }

  /** Whether a refused reply (stop reason "refusal") lies between the two seqs, both included: an index lookup. */
  refusalBetween(fromSeq: number, toSeq: number): boolean {
    const refusal = `json_extract(extra, '$.stopReason') = 'refusal' AND seq BETWEEN ? AND ?`;
    return this.sql.exec(`SELECT 1 FROM messages WHERE ${refusal} LIMIT 1`, fromSeq, toSeq).toArray().length > 0;
  }

  /**
   * Seqs (both ends included; 16 at most, nearest `toSeq` first when `back`) of the thread's user messages that may
   * open a turn: no tool result in their stored JSON (a part's first). No message is read out (index-outbox.ts).
   */
  userSeqs({ fromSeq, toSeq, back }: { fromSeq: number; toSeq: number; back: boolean }): number[] {
    const json = `CASE content WHEN '' THEN (SELECT body FROM message_parts p WHERE p.seq = messages.seq AND part = 0) ELSE content END`;
    const user = `role = 'user' AND json_type(extra, '$.agent') IS NULL AND instr(${json}, '"type":"tool_result"') = 0`;
    const where = `seq BETWEEN ? AND ? AND ${user} ORDER BY seq ${back ? "DESC" : "ASC"} LIMIT 16`;
    const rows = this.sql.exec<{ seq: number }>(`SELECT seq FROM messages WHERE ${where}`, fromSeq, toSeq);
    return rows.toArray().map((r) => r.seq);
  }

  range(fromSeq: number, toSeq: number): StoredMessage[] {
    return this.sql
      .exec<MessageRow>(
        `SELECT seq, id, role, content, created_at, extra FROM messages WHERE seq BETWEEN ? AND ? ORDER BY seq`,
        fromSeq,
        toSeq,
      )
      .toArray()
      .map((row) => this.toMessage(row));
  }

  byId(id: string): StoredMessage | null {
    const row = this.sql
      .exec<MessageRow>(`SELECT seq, id, role, content, created_at, extra FROM messages WHERE id = ?`, id)
      .toArray()[0];
    return row ? this.toMessage(row) : null;
  }

  private toMessage(row: MessageRow): StoredMessage {
    const json =
      row.content === IN_PARTS
        ? this.sql
            .exec<{ body: string }>(`SELECT body FROM message_parts WHERE seq = ? ORDER BY part`, row.seq)
            .toArray()
            .map((p) => p.body)
            .join("")
        : row.content;
    return {
      id: row.id,
      seq: row.seq,
      role: row.role as StoredMessage["role"],
      content: JSON.parse(json),
      createdAt: row.created_at,
      ...(row.extra ? JSON.parse(row.extra) : {}),
    };
  }
}

/** Cuts `text` into parts of at most PART_CHARS, never between the two halves of a surrogate pair. */
export function splitParts(text: string): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + PART_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

/** A turn part's spending as its ledger row will hold it: the row's key, where, on which model. */
export interface TurnSpending {
  key: string;
  /** The UTC day it was spent on (the ledger's day). */
  day: string;
  tenantId: string;
  conversationId: string;
  model: string;
  usage: Usage;
  /**
   * The same usage by the model that spent it (a refusal fallback's part apart), each with its
   * ledger key, as the part's own meter would write them. Absent in what objects kept before it:
   * then `usage` goes under `model`.
   */
  parts?: { key: string; model: string; usage: Usage }[];
}
