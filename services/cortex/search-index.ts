// The cortex: FTS5 (BM25, porter stemming) over every persisted message, memory note, fold
// episode and attachment page. These functions run on one cortex shard, a D1 database
// (CORTEX_SHARD_n, services/cortex/shard.ts), or a session on it; callers reach a tenant's shard
// with cortexFor (services/cortex/routing.ts). Indexing is idempotent (doc_id upserts), so a retried or
// repeated run changes nothing. Every query is scoped to one tenant.
import { renderMessageText } from "../../core/render";
import { assistantWeight } from "../../core/speaker-weight";
import { contentTerms } from "../../core/stopwords";
import { fts5RowCount, tenantPhraseWeights } from "./term-stats";
import type { StoredMessage } from "../../core/types";

/** Long texts are indexed in chunks so one row stays well under D1's row size limit. */
export const INDEX_CHUNK_CHARS = 20_000;
const MAX_STATEMENTS_PER_BATCH = 50;

/**
 * What the cortex functions run on: a shard's D1 database, or a Sessions API session on it (reads
 * near the caller, services/cortex/shard.ts). The benches hand in node:sqlite in the same shape.
 */
export type ShardDatabase = Pick<D1Database, "prepare" | "batch">;

export type DocKind = "message" | "memory" | "episode" | "page";

export interface CortexDoc {
  tenantId: string;
  kind: DocKind;
  /** The id the hit points at: a message, note or episode id. */
  refId: string;
  conversationId: string | null;
  seq: number | null;
  role: string | null;
  createdAt: string;
  body: string;
}

export interface SearchHit {
  kind: DocKind;
  id: string;
  conversationId: string | null;
  /** Set for message hits (the same as `id`), kept for clients of the first version. */
  messageId: string | null;
  seq: number | null;
  role: string | null;
  createdAt: string;
  snippet: string;
  score: number;
}

const docPrefix = (kind: DocKind, refId: string) => `${kind}:${refId}:`;

/**
 * The upsert of one cortex_docs row, its parameters in column order (doc_id, tenant_id,
 * conversation_id, kind, ref_id, seq, role, created_at, body). A new row takes the next rowid of
 * its tenant's range (d1-migrations/cortex-shard/0003_tenant_fts.sql), which `tenantRange` made
 * sure of earlier in the batch; the insert trigger would otherwise move it there, at the cost of a
 * second write.
 */
export const INSERT_DOC = `INSERT INTO cortex_docs (rowid, doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body)
  VALUES ((SELECT coalesce((SELECT max(d.rowid) FROM cortex_docs d WHERE d.rowid BETWEEN r.base AND r.base + 4294967295), r.base) + 1
           FROM cortex_tenant_ranges r WHERE r.tenant_id = ?2), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`;
export const UPSERT_DOC = `${INSERT_DOC}
  ON CONFLICT(doc_id) DO UPDATE SET body = excluded.body WHERE cortex_docs.body != excluded.body`;

/** Gives the tenant a rowid range in the shard if it has none yet (the next after the last). */
export const tenantRange = (db: ShardDatabase, tenantId: string) =>
  db
    .prepare(
      `INSERT OR IGNORE INTO cortex_tenant_ranges (tenant_id, base)
       SELECT ?, coalesce(max(base), 0) + 4294967296 FROM cortex_tenant_ranges`,
    )
    .bind(tenantId);

/**
 * The parameters of one cortex_docs row in column order (as UPSERT_DOC binds them): chunk `chunk` of
 * `d`, holding `body`.
 */
export const docParams = (d: CortexDoc, chunk: number, body: string) =>
  [
    docPrefix(d.kind, d.refId) + chunkKey(chunk),
    d.tenantId,
    d.conversationId,
    d.kind,
    d.refId,
    d.seq,
    d.role,
    d.createdAt,
    body,
  ] as const;

/** Upserts docs, chunked; chunks a shorter new body no longer has are removed. */
export async function upsertDocs(db: ShardDatabase, docs: readonly CortexDoc[]): Promise<void> {
  const upsert = db.prepare(UPSERT_DOC);
  const trim = db.prepare(
    `DELETE FROM cortex_docs WHERE tenant_id = ? AND kind = ? AND ref_id = ? AND doc_id >= ? AND doc_id < ?`,
  );
  const statements: D1PreparedStatement[] = [];
  for (const tenantId of new Set(docs.map((d) => d.tenantId))) statements.push(tenantRange(db, tenantId));
  for (const d of docs) {
    const chunks = Math.max(1, Math.ceil(d.body.length / INDEX_CHUNK_CHARS));
    for (let i = 0; i < chunks; i++) {
      const body = d.body.slice(i * INDEX_CHUNK_CHARS, (i + 1) * INDEX_CHUNK_CHARS);
      statements.push(upsert.bind(...docParams(d, i, body)));
    }
    // Notes can shrink: drop chunks beyond the new last one. (Messages are immutable.)
    if (d.kind !== "message")
      statements.push(
        trim.bind(
          d.tenantId,
          d.kind,
          d.refId,
          docPrefix(d.kind, d.refId) + chunkKey(chunks),
          `${docPrefix(d.kind, d.refId)}~`,
        ),
      );
  }
  for (let i = 0; i < statements.length; i += MAX_STATEMENTS_PER_BATCH)
    await db.batch(statements.slice(i, i + MAX_STATEMENTS_PER_BATCH));
}

const chunkKey = (i: number) => String(i).padStart(5, "0");

export async function deleteDocs(
  db: ShardDatabase,
  tenantId: string,
  doc: { kind: DocKind; refId: string },
): Promise<void> {
  const { kind, refId } = doc;
  await db
    .prepare(`DELETE FROM cortex_docs WHERE tenant_id = ? AND kind = ? AND ref_id = ?`)
    .bind(tenantId, kind, refId)
    .run();
}

export function messageDoc(tenantId: string, conversationId: string, m: StoredMessage): CortexDoc {
  return {
    tenantId,
    kind: "message",
    refId: m.id,
    conversationId,
    seq: m.seq,
    role: m.role,
    createdAt: m.createdAt,
    body: renderMessageText(m),
  };
}

/** The conversation a message belongs to, within one tenant (null if not this tenant's). */
export async function conversationOfMessage(
  db: ShardDatabase,
  tenantId: string,
  messageId: string,
): Promise<string | null> {
  const row = await db
    .prepare(
      `SELECT conversation_id AS c FROM cortex_docs WHERE tenant_id = ? AND kind = 'message' AND ref_id = ? LIMIT 1`,
    )
    .bind(tenantId, messageId)
    .first<{ c: string }>();
  return row?.c ?? null;
}

/**
 * User text -> an FTS5 query that cannot be a syntax error: every word or identifier becomes a
 * quoted phrase ("run-42.log" stays one phrase of its parts), and all phrases must match. Function
 * words ("what did I ...") are left out unless the query has nothing else.
 */
export function toFtsQuery(q: string, mode: "and" | "or" = "and"): string | null {
  const words = queryWords(q);
  return words ? words.map(ftsPhrase).join(mode === "and" ? " " : " OR ") : null;
}

/** The words of `q` a search looks for (each one FTS5 phrase), function words left out; null if none. */
export function queryWords(q: string): string[] | null {
  const terms = q.match(/[\p{L}\p{N}_]+(?:[-.:/@#][\p{L}\p{N}_]+)*/gu);
  if (!terms?.length) return null;
  return contentTerms([...new Set(terms.slice(0, 32))]);
}

const ftsPhrase = (word: string) => `"${word.replace(/"/g, '""')}"`;

/**
 * The tenant's rowid range in its shard (d1-migrations/cortex-shard/0003_tenant_fts.sql): a FROM
 * item of one row (lo, hi), taking the tenant id as its one parameter. An FTS5 scan constrained to
 * `rowid BETWEEN lo AND hi` seeks to the tenant's rows in each word's doclist and scores only them.
 */
const TENANT_RANGE = `(SELECT base AS lo, base + 4294967295 AS hi FROM cortex_tenant_ranges WHERE tenant_id = ?)`;

export interface SearchOptions {
  conversationId?: string;
  kinds?: readonly DocKind[];
  /** Only documents whose ref id starts with this (e.g. one attachment's pages: "att_…:"). */
  refPrefix?: string;
  /** Whose words are sought; unset: the person's, unless the query asks for the assistant's. */
  said?: "user" | "assistant";
  limit: number;
  /** The semantic path's fusion (services/semantic/select.ts cortexFusionFor); unset: lexical only. */
  fusion?: CortexFusion;
}

/** What a fused page is built from: the shard, the tenant, the query and its filters, where the page starts, and the lexical ranking. */
export interface FusionRequest {
  db: ShardDatabase;
  tenantId: string;
  q: string;
  opts: SearchOptions;
  offset: number;
  /** The lexical ranking's top `count`, from its first hit. */
  lexical: (count: number) => Promise<SearchHit[]>;
}

/** The semantic path's side of a search: one page fused from the lexical ranking and its own. */
export interface CortexFusion {
  page(request: FusionRequest): Promise<{ hits: SearchHit[]; next: SearchCursor | null }>;
}

/** Where a later page of a search starts: how many hits came before. */
export interface SearchCursor {
  offset: number;
}

/** One page of a search: the query text, its filters, and where the page starts. */
export interface SearchRequest extends SearchOptions {
  q: string;
  cursor?: SearchCursor;
}

/**
 * One page of the cortex's BM25 ranking over the subject terms, one hit per document; `next`
 * continues it exactly (ties are ordered by doc id).
 * Any subject term matches (a question in words rarely has all its words in the turn it means;
 * BM25 already ranks documents holding more of them higher). Each word's idf counts the shard's
 * documents plus a fixed background's (services/cortex/term-stats.ts), so a ranking does not
 * depend on other tenants (unless the routing table puts them in the same shard). An assistant
 * message's score is discounted (core/speaker-weight) so a reply restating a person's words does
 * not push other evidence out.
 * The whole ranking is one SQL order, so a paged walk is the one-page ranking.
 */
export async function searchCortexPage(
  db: ShardDatabase,
  tenantId: string,
  request: SearchRequest,
): Promise<{ hits: SearchHit[]; next: SearchCursor | null }> {
  const { q, ...opts } = request;
  const words = queryWords(q);
  if (!words) return { hits: [], next: null };
  const offset = opts.cursor?.offset ?? 0;
  const assistant = assistantWeight(q, opts.said);
  // ── Semantic fusion hook: with a semantic path on, the page is the reciprocal-rank fusion of this
  // lexical ranking and the vector ranking (services/semantic/fusion.ts). ──
  if (opts.fusion)
    return opts.fusion.page({
      db,
      tenantId,
      q,
      opts,
      offset,
      lexical: (count) => runSearch(db, { tenantId, words, assistant, opts, offset: 0, count }),
    });
  const ranked = await runSearch(db, { tenantId, words, assistant, opts, offset, count: opts.limit + 1 });
  const hits = ranked.slice(0, opts.limit);
  return { hits, next: ranked.length > opts.limit ? { offset: offset + opts.limit } : null };
}

/**
 * Each word's factor on its own bm25 (term-stats.ts tenantPhraseWeights). FTS5's idf, which the
 * factor cancels, counts the whole shard (its row count and how many rows each word matches); the
 * idf put in its place counts the tenant's rows only, plus the background, so a ranking does not
 * depend on which other tenants share the shard. A one-word search is weighted too, so every score
 * is on the blended scale (FTS5's own idf is floored at 1e-6 for a word in most of a shard's rows).
 * Lists go in as one JSON parameter each: a statement takes at most 100 bound parameters.
 */
async function wordWeights(db: ShardDatabase, tenantId: string, words: readonly string[]): Promise<number[]> {
  const averages = await db.prepare(`SELECT block FROM cortex_fts_data WHERE id = 1`).first<unknown>("block");
  const shardRows = fts5RowCount(averages);
  if (shardRows === null) return words.map(() => 1);
  const { results } = await db
    .prepare(
      `SELECT w.key AS i,
              (SELECT count(*) FROM cortex_fts WHERE cortex_fts MATCH w.value) AS n,
              (SELECT count(*) FROM ${TENANT_RANGE.replace("?", "?2")} r CROSS JOIN cortex_fts
                  ON cortex_fts MATCH w.value AND cortex_fts.rowid BETWEEN r.lo AND r.hi
                CROSS JOIN cortex_docs d ON d.rowid = cortex_fts.rowid WHERE d.tenant_id = ?2) AS t,
              (SELECT count(*) FROM cortex_docs WHERE tenant_id = ?2) AS rows
       FROM json_each(?1) w`,
    )
    .bind(JSON.stringify(words.map(ftsPhrase)), tenantId)
    .all<{ i: number; n: number; t: number; rows: number }>();
  const at = (i: number) => results.find((r) => r.i === i);
  return tenantPhraseWeights(
    {
      shardRows,
      shardHits: words.map((_, i) => at(i)?.n ?? 0),
      tenantRows: results[0]?.rows ?? 0,
      tenantHits: words.map((_, i) => at(i)?.t ?? 0),
    },
    words,
  );
}

/** What one ranking run reads: the tenant's documents for `words`, the assistant's factor, filters, a window. */
interface RankingRun {
  tenantId: string;
  words: readonly string[];
  assistant: number;
  opts: SearchOptions;
  offset: number;
  count: number;
}

/** Documents ranked `offset` to `offset + count`: chunk rows are fetched until that many distinct documents are seen. */
async function runSearch(db: ShardDatabase, run: RankingRun): Promise<SearchHit[]> {
  const { tenantId, words, assistant, opts, offset, count } = run;
  const weights = await wordWeights(db, tenantId, words);
  // Each word's bm25 alone (one FTS5 query per row of w), weighted, summed per row: FTS5's OR-query
  // score with the blended idf. The words are rows of one JSON parameter, not a UNION: SQLite here
  // caps a compound SELECT at a few terms, and a question has up to 32 words.
  const filters: string[] = [];
  // In the order of the statement's placeholders: the words, the tenant (its rowid range), the
  // assistant's factor, the tenant.
  const params: unknown[] = [
    JSON.stringify(words.map((w, i) => [weights[i], ftsPhrase(w)])),
    tenantId,
    assistant,
    tenantId,
  ];
  if (opts.conversationId) {
    filters.push("AND d.conversation_id = ?");
    params.push(opts.conversationId);
  }
  if (opts.refPrefix) {
    // ref ids never contain LIKE wildcards (ids and ":" only), so a plain prefix pattern is exact.
    filters.push("AND d.ref_id LIKE ?");
    params.push(`${opts.refPrefix}%`);
  }
  if (opts.kinds?.length) {
    filters.push(`AND d.kind IN (${opts.kinds.map(() => "?").join(", ")})`);
    params.push(...opts.kinds);
  }
  const wanted = offset + count;
  // Chunks of one document collapse to its best chunk, so more rows than documents are read.
  for (let rows = wanted * 3; ; rows *= 4) {
    const { results } = await db
      .prepare(
        // The scores are taken while FTS5 scans (MATERIALIZED): bm25() only works there, not once
        // rows are sorted for the grouping. Each scan stays in the tenant's rowid range.
        `WITH w(weight, phrase) AS (SELECT value ->> 0, value ->> 1 FROM json_each(?)),
              h AS MATERIALIZED (SELECT cortex_fts.rowid AS rowid, bm25(cortex_fts) * w.weight AS s
                FROM w CROSS JOIN ${TENANT_RANGE} r
                CROSS JOIN cortex_fts ON cortex_fts MATCH w.phrase AND cortex_fts.rowid BETWEEN r.lo AND r.hi)
         SELECT h.rowid AS chunk, d.kind AS kind, d.ref_id AS id, d.conversation_id AS conversationId, d.seq AS seq, d.role AS role,
                d.created_at AS createdAt, SUM(h.s) * (CASE WHEN d.kind = 'message' AND d.role = 'assistant' THEN ? ELSE 1 END) AS score
         FROM h JOIN cortex_docs d ON d.rowid = h.rowid
         WHERE d.tenant_id = ? ${filters.join(" ")}
         GROUP BY h.rowid
         ORDER BY score, d.doc_id LIMIT ?`,
      )
      .bind(...params, rows)
      .all<Omit<SearchHit, "messageId" | "snippet"> & { chunk: number }>();
    const seen = new Set<string>();
    const best: (typeof results)[number][] = [];
    for (const h of results) {
      const key = `${h.kind}:${h.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      best.push(h);
      if (best.length === wanted) break;
    }
    if (best.length === wanted || results.length < rows) return withSnippets(db, words, best.slice(offset));
  }
}

/** The hits with their snippets, taken from the chunk that ranked (only for the hits returned). */
async function withSnippets(
  db: ShardDatabase,
  words: readonly string[],
  ranked: readonly (Omit<SearchHit, "messageId" | "snippet"> & { chunk: number })[],
): Promise<SearchHit[]> {
  if (!ranked.length) return [];
  const { results } = await db
    .prepare(
      `SELECT cortex_fts.rowid AS chunk, snippet(cortex_fts, 0, '[', ']', '…', 24) AS snippet
       FROM json_each(?) r CROSS JOIN cortex_fts ON cortex_fts MATCH ? AND cortex_fts.rowid = r.value`,
    )
    .bind(JSON.stringify(ranked.map((h) => h.chunk)), words.map(ftsPhrase).join(" OR "))
    .all<{ chunk: number; snippet: string }>();
  const snippets = new Map(results.map((r) => [r.chunk, r.snippet]));
  return ranked.map(({ chunk, ...h }) => ({
    ...h,
    snippet: snippets.get(chunk) ?? "",
    messageId: h.kind === "message" ? h.id : null,
  }));
}

export const pageRef = (attachmentId: string, page: number) => `${attachmentId}:p${String(page).padStart(6, "0")}`;

/** Ref ids of an attachment's pages match this LIKE pattern (see pageRef). */
export const pageRefPattern = (attachmentId: string) => `${attachmentId}:p%`;

/** Pages of one attachment already in the cortex (idempotent progress: re-indexing counts once). */
export async function countIndexedPages(db: ShardDatabase, tenantId: string, attachmentId: string): Promise<number> {
  const row = await db
    .prepare(
      `SELECT COUNT(DISTINCT ref_id) AS n FROM cortex_docs WHERE tenant_id = ? AND kind = 'page' AND ref_id LIKE ?`,
    )
    .bind(tenantId, `${attachmentId}:p%`)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
