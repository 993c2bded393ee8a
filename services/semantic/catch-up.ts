// The vectors are a derived view of the cortex: the documents without a vector yet (new or changed)
// and the tombstones of deleted ones (left by the cortex schema's triggers) say what to write. The
// index outbox runs this on the tenant's D1 shard after each indexing run (CortexShard.syncVectors,
// shard-vectors.ts), so vectors are written with the documents, retried by the outbox's alarm; the
// shard forgets a deleted document's vector as it deletes it; and each search runs it too, as the
// repair path for documents written outside a conversation's outbox (notes, PDF pages, moved
// rows) or whose embedding failed. The tables are d1-migrations/cortex-shard/0002_semantic.sql's.
import type { ShardDatabase } from "../cortex/search-index";
import { sha256Hex } from "../../core/ids";
import type { SemanticPath } from "./types";

/** At most this many documents are embedded per search, so one search stays bounded. */
export const CATCH_UP_MAX_DOCS = 2000;
const EMBED_BATCH = 100;
/** A vector is built from the start of a long chunk: the embedding is a summary, not an index. */
const EMBED_CHARS = 4000;

/** The vector's id: a digest of tenant and document, within Vectorize's 64-byte id limit. */
export const vectorId = async (tenantId: string, docId: string) =>
  (await sha256Hex(`${tenantId}\n${docId}`)).slice(0, 40);

const GONE_PER_ROUND = 1000;

/** Deletes the vectors of the tenant's deleted documents from the index; returns how many went. */
export async function forgetGone(db: ShardDatabase, path: SemanticPath, tenantId: string): Promise<number> {
  let forgotten = 0;
  for (;;) {
    const gone = await db
      .prepare(`SELECT vec_id AS id FROM cortex_vectors_gone WHERE tenant_id = ? LIMIT ${GONE_PER_ROUND}`)
      .bind(tenantId)
      .all<{ id: string }>();
    if (!gone.results.length) return forgotten;
    const ids = gone.results.map((r) => r.id);
    await path.index.delete(tenantId, ids);
    const clear = db.prepare(`DELETE FROM cortex_vectors_gone WHERE tenant_id = ? AND vec_id = ?`);
    await db.batch(ids.map((id) => clear.bind(tenantId, id)));
    forgotten += ids.length;
    if (ids.length < GONE_PER_ROUND) return forgotten;
  }
}

/** One catch-up: the tenant's shard, its semantic path, and at most how many documents to embed. */
export interface CatchUp {
  db: ShardDatabase;
  path: SemanticPath;
  tenantId: string;
  /** Default CATCH_UP_MAX_DOCS. */
  maxDocs?: number;
}

/** Brings the tenant's vectors up to date with its cortex documents; returns how many were embedded. */
export async function catchUp({ db, path, tenantId, maxDocs = CATCH_UP_MAX_DOCS }: CatchUp): Promise<number> {
  await forgetGone(db, path, tenantId);
  const { results } = await db
    .prepare(
      `SELECT d.doc_id AS docId, d.body AS body FROM cortex_docs d LEFT JOIN cortex_embedded e ON e.doc_id = d.doc_id
       WHERE d.tenant_id = ? AND e.doc_id IS NULL ORDER BY d.rowid LIMIT ?`,
    )
    .bind(tenantId, maxDocs)
    .all<{ docId: string; body: string }>();
  for (let i = 0; i < results.length; i += EMBED_BATCH) {
    const batch = results.slice(i, i + EMBED_BATCH);
    const vectors = await path.embedder.embed(batch.map((r) => r.body.slice(0, EMBED_CHARS)));
    const ids = await Promise.all(batch.map((r) => vectorId(tenantId, r.docId)));
    await path.index.upsert(
      tenantId,
      batch.map((_, j) => ({ id: ids[j], vector: vectors[j] })),
    );
    const mark = db.prepare(`INSERT OR REPLACE INTO cortex_embedded (doc_id, tenant_id, vec_id) VALUES (?, ?, ?)`);
    await db.batch(batch.map((r, j) => mark.bind(r.docId, tenantId, ids[j])));
  }
  return results.length;
}
