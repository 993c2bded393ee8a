// The cortex: D1 FTS5 over every persisted message (and, in later issues, memory and attachment
// pages). Indexing is idempotent (doc_id upserts), so a retried or repeated run changes nothing.
import { renderMessageText } from "../../core/render";
import type { StoredMessage } from "../../core/types";

/** Long messages are indexed in chunks so one row stays well under D1's row size limit. */
export const INDEX_CHUNK_CHARS = 20_000;
const MAX_STATEMENTS_PER_BATCH = 50;

export interface SearchHit {
  kind: string;
  conversationId: string | null;
  messageId: string;
  seq: number | null;
  role: string | null;
  createdAt: string;
  snippet: string;
  score: number;
}

export async function indexMessages(db: D1Database, tenantId: string, conversationId: string, messages: readonly StoredMessage[]): Promise<void> {
  const upsert = db.prepare(
    `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body)
     VALUES (?, ?, ?, 'message', ?, ?, ?, ?, ?)
     ON CONFLICT(doc_id) DO UPDATE SET body = excluded.body WHERE cortex_docs.body != excluded.body`,
  );
  const statements: D1PreparedStatement[] = [];
  for (const m of messages) {
    const text = renderMessageText(m);
    const chunks = Math.max(1, Math.ceil(text.length / INDEX_CHUNK_CHARS));
    for (let i = 0; i < chunks; i++) {
      const body = text.slice(i * INDEX_CHUNK_CHARS, (i + 1) * INDEX_CHUNK_CHARS);
      statements.push(upsert.bind(`msg:${m.id}:${i}`, tenantId, conversationId, m.id, m.seq, m.role, m.createdAt, body));
    }
  }
  for (let i = 0; i < statements.length; i += MAX_STATEMENTS_PER_BATCH) await db.batch(statements.slice(i, i + MAX_STATEMENTS_PER_BATCH));
}

/**
 * User text -> an FTS5 query that cannot be a syntax error: every word or identifier becomes a
 * quoted phrase ("run-42.log" stays one phrase of its parts), and all phrases must match.
 */
export function toFtsQuery(q: string, mode: "and" | "or" = "and"): string | null {
  const terms = q.match(/[\p{L}\p{N}_]+(?:[-.:/@#][\p{L}\p{N}_]+)*/gu);
  if (!terms?.length) return null;
  const unique = [...new Set(terms.slice(0, 32))];
  return unique.map((t) => `"${t.replace(/"/g, '""')}"`).join(mode === "and" ? " " : " OR ");
}

export async function searchCortex(
  db: D1Database,
  tenantId: string,
  q: string,
  opts: { conversationId?: string; limit: number },
): Promise<SearchHit[]> {
  for (const mode of ["and", "or"] as const) {
    const match = toFtsQuery(q, mode);
    if (!match) return [];
    const hits = await runSearch(db, tenantId, match, opts);
    if (hits.length || mode === "or") return hits;
  }
  return [];
}

async function runSearch(db: D1Database, tenantId: string, match: string, opts: { conversationId?: string; limit: number }): Promise<SearchHit[]> {
  const filter = opts.conversationId ? `AND d.conversation_id = ?` : "";
  const params: unknown[] = [match, tenantId, ...(opts.conversationId ? [opts.conversationId] : []), opts.limit];
  const { results } = await db
    .prepare(
      `SELECT d.kind AS kind, d.conversation_id AS conversationId, d.ref_id AS messageId, d.seq AS seq, d.role AS role,
              d.created_at AS createdAt, snippet(cortex_fts, 0, '[', ']', '…', 24) AS snippet, bm25(cortex_fts) AS score
       FROM cortex_fts JOIN cortex_docs d ON d.rowid = cortex_fts.rowid
       WHERE cortex_fts MATCH ? AND d.tenant_id = ? ${filter}
       ORDER BY score LIMIT ?`,
    )
    .bind(...params)
    .all<SearchHit>();
  // One hit per message: chunks of the same message collapse to their best-ranked chunk.
  const seen = new Set<string>();
  return results.filter((h) => (seen.has(h.messageId) ? false : (seen.add(h.messageId), true)));
}
