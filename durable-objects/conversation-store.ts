// The ConversationDO's SQLite: the hot index of the conversation. Everything here can be rebuilt
// from R2 (see r2-layout/README.md); the schema is versioned and created idempotently.
import type { StoredMessage } from "../core/types";
import type { ConversationHead } from "./conversation-head";

const SCHEMA_VERSION = 1;

interface MessageRow extends Record<string, SqlStorageValue> {
  seq: number;
  id: string;
  role: string;
  content: string;
  created_at: string;
  extra: string | null;
}

export class ConversationStore {
  constructor(private readonly sql: SqlStorage) {}

  ensureSchema(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const version = Number(this.getKv("schema_version") ?? 0);
    if (version >= SCHEMA_VERSION) return;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      created_at TEXT NOT NULL,
      chars INTEGER NOT NULL,
      extra TEXT,
      batch_key TEXT NOT NULL
    )`);
    this.setKv("schema_version", String(SCHEMA_VERSION));
  }

  private getKv(key: string): string | null {
    const row = this.sql.exec<{ value: string }>(`SELECT value FROM kv WHERE key = ?`, key).toArray()[0];
    return row ? row.value : null;
  }

  private setKv(key: string, value: string): void {
    this.sql.exec(`INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value);
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

  lastSeq(): number {
    return this.sql.exec<{ s: number | null }>(`SELECT MAX(seq) AS s FROM messages`).one().s ?? 0;
  }

  insertMessages(messages: readonly StoredMessage[], batchKey: string, chars: (m: StoredMessage) => number): void {
    for (const m of messages) {
      const { id, seq, role, content, createdAt, ...extra } = m;
      this.sql.exec(
        `INSERT INTO messages (seq, id, role, content, created_at, chars, extra, batch_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        seq,
        id,
        role,
        JSON.stringify(content),
        createdAt,
        chars(m),
        Object.keys(extra).length ? JSON.stringify(extra) : null,
        batchKey,
      );
    }
  }

  /** Messages with seq > after, oldest first. */
  listAfter(after: number, limit: number): StoredMessage[] {
    return this.sql
      .exec<MessageRow>(`SELECT seq, id, role, content, created_at, extra FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
      .toArray()
      .map(toMessage);
  }

  range(fromSeq: number, toSeq: number): StoredMessage[] {
    return this.sql
      .exec<MessageRow>(`SELECT seq, id, role, content, created_at, extra FROM messages WHERE seq BETWEEN ? AND ? ORDER BY seq`, fromSeq, toSeq)
      .toArray()
      .map(toMessage);
  }

  byId(id: string): StoredMessage | null {
    const row = this.sql.exec<MessageRow>(`SELECT seq, id, role, content, created_at, extra FROM messages WHERE id = ?`, id).toArray()[0];
    return row ? toMessage(row) : null;
  }
}

function toMessage(row: MessageRow): StoredMessage {
  return {
    id: row.id,
    seq: row.seq,
    role: row.role as StoredMessage["role"],
    content: JSON.parse(row.content),
    createdAt: row.created_at,
    ...(row.extra ? JSON.parse(row.extra) : {}),
  };
}
