// The vectors are a derived view of the cortex: the documents without a vector yet (new or changed)
// and the tombstones of deleted ones (left by the cortex schema's triggers) say what to write. The
// index outbox runs this on the tenant's D1 shard after each indexing run (CortexShard.syncVectors,
// shard-vectors.ts), so vectors are written with the documents, retried by the outbox's alarm; the
// shard forgets a deleted document's vector as it deletes it; and each search runs it too, as the
// repair path for documents written outside a conversation's outbox (notes, PDF pages, moved
// rows) or whose embedding failed. Two catch-ups at once (the outbox's sync beside a search's)
// split the work: each embeds only the documents it claimed. The tables are
// d1-migrations/cortex-shard/0002_semantic.sql's, the triggers 0005_stale_vectors.sql's: a changed
// document's mark is kept as STALE + its vector id (the old vector is still in the index under that
// id) until a catch-up re-embeds it, so a delete before then still tombstones the vector.
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

/**
 * A catch-up claims the documents it embeds (a cortex_embedded row whose vec_id is CLAIM and the
 * time), so another one running at once (the outbox's sync beside a search's) skips them instead
 * of embedding them again. A claim older than CLAIM_EXPIRES_MS is a catch-up that died: its
 * documents are taken again. A claim's vec_id is never a vector's, so no search or delete finds one.
 */
const CLAIM = "claim:";
const CLAIM_EXPIRES_MS = 5 * 60_000;
/** A claim's vec_id at `ms`: fixed width, so a claim is older exactly when its id sorts lower. */
const claimAt = (ms: number) => `${CLAIM}${String(ms).padStart(15, "0")}`;
/** D1 binds at most 100 parameters per statement. */
const CLAIMS_PER_STATEMENT = 90;
/** A changed document's mark: its old vector (or claim) is out of date, and it is embedded again. */
const STALE = "stale:";
/** The tombstone of a document deleted while claimed: its vector, if any, is the document's vector id. */
const DOC = "doc:";

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
    // A claim's id (left by a delete before migration 0005) is no vector's; a document's tombstone
    // (a delete while claimed) stands for the document's vector id.
    const vectors = await Promise.all(
      ids
        .filter((id) => !id.startsWith(CLAIM))
        .map((id) => (id.startsWith(DOC) ? vectorId(tenantId, id.slice(DOC.length)) : id)),
    );
    if (vectors.length) await path.index.delete(tenantId, vectors);
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

/** The tenant's documents without a vector (or with a stale one, or a dead claim), oldest first; `stale`: had a vector mark. */
async function unembedded(
  db: ShardDatabase,
  { tenantId, maxDocs, now }: { tenantId: string; maxDocs: number; now: number },
): Promise<{ docId: string; stale: boolean }[]> {
  const { results } = await db
    .prepare(
      `SELECT d.doc_id AS docId, coalesce(e.vec_id LIKE '${STALE}%', 0) AS stale
       FROM cortex_docs d LEFT JOIN cortex_embedded e ON e.doc_id = d.doc_id
       WHERE d.tenant_id = ? AND (e.doc_id IS NULL OR e.vec_id LIKE '${STALE}%' OR (e.vec_id LIKE '${CLAIM}%' AND e.vec_id < ?))
       ORDER BY d.rowid LIMIT ?`,
    )
    .bind(tenantId, claimAt(now - CLAIM_EXPIRES_MS), maxDocs)
    .all<{ docId: string; stale: number }>();
  return results.map((r) => ({ docId: r.docId, stale: r.stale === 1 }));
}

/** Claims what no other catch-up holds; returns the claimed documents with their bodies. */
async function claim(
  db: ShardDatabase,
  { tenantId, docIds, now }: { tenantId: string; docIds: string[]; now: number },
): Promise<{ docId: string; body: string }[]> {
  const mark = claimAt(now);
  const dead = claimAt(now - CLAIM_EXPIRES_MS);
  const claimed: { docId: string; body: string }[] = [];
  for (let i = 0; i < docIds.length; i += CLAIMS_PER_STATEMENT) {
    const ids = docIds.slice(i, i + CLAIMS_PER_STATEMENT);
    // One statement: a row another catch-up claimed (or embedded) meanwhile is left alone, a dead claim or a stale mark is taken over.
    const { results } = await db
      .prepare(
        `INSERT INTO cortex_embedded (doc_id, tenant_id, vec_id)
         SELECT d.doc_id, d.tenant_id, ? FROM cortex_docs d WHERE d.tenant_id = ? AND d.doc_id IN (${ids.map(() => "?").join(", ")})
         ON CONFLICT(doc_id) DO UPDATE SET vec_id = excluded.vec_id
           WHERE (cortex_embedded.vec_id LIKE '${CLAIM}%' AND cortex_embedded.vec_id < ?) OR cortex_embedded.vec_id LIKE '${STALE}%'
         RETURNING doc_id AS docId`,
      )
      .bind(mark, tenantId, ...ids, dead)
      .all<{ docId: string }>();
    if (!results.length) continue;
    const mine = results.map((r) => r.docId);
    const bodies = await db
      .prepare(
        `SELECT doc_id AS docId, body FROM cortex_docs WHERE tenant_id = ? AND doc_id IN (${mine.map(() => "?").join(", ")})`,
      )
      .bind(tenantId, ...mine)
      .all<{ docId: string; body: string }>();
    claimed.push(...bodies.results);
  }
  return claimed;
}

/** Brings the tenant's vectors up to date with its cortex documents; returns how many were embedded. */
export async function catchUp({ db, path, tenantId, maxDocs = CATCH_UP_MAX_DOCS }: CatchUp): Promise<number> {
  await forgetGone(db, path, tenantId);
  const now = Date.now();
  const waiting = await unembedded(db, { tenantId, maxDocs, now });
  // Nothing to embed (every search but the first after a write): a read only, no claim.
  if (!waiting.length) return 0;
  const mark = claimAt(now);
  const results = await claim(db, { tenantId, docIds: waiting.map((w) => w.docId), now });
  try {
    await embedClaimed({ db, path, tenantId, mark }, results);
  } catch (err) {
    await release({ db, tenantId, mark }, waiting).catch(() => {});
    throw err;
  }
  return results.length;
}

/**
 * After a failed embedding: lets the next catch-up take the claimed documents at once rather than
 * after the claim expires. A document that had a (stale) vector gets its stale mark back, so a
 * delete before it is embedded again still tombstones that vector; the others lose their row.
 */
async function release(
  { db, tenantId, mark }: Pick<CatchUp, "db" | "tenantId"> & { mark: string },
  waiting: { docId: string; stale: boolean }[],
): Promise<void> {
  const restore = db.prepare(`UPDATE cortex_embedded SET vec_id = ? WHERE tenant_id = ? AND doc_id = ? AND vec_id = ?`);
  const drop = db.prepare(`DELETE FROM cortex_embedded WHERE tenant_id = ? AND doc_id = ? AND vec_id = ?`);
  const statements = await Promise.all(
    waiting.map(async ({ docId, stale }) =>
      stale
        ? restore.bind(`${STALE}${await vectorId(tenantId, docId)}`, tenantId, docId, mark)
        : drop.bind(tenantId, docId, mark),
    ),
  );
  if (statements.length) await db.batch(statements);
}

/**
 * Embeds the claimed documents and marks each embedded, but only where the claim is still this
 * catch-up's. A document changed meanwhile lost its claim to the cortex trigger: the vector just
 * written of its old body is deleted again, and the next catch-up embeds its new body. One deleted
 * meanwhile is gone from the cortex: its vector is deleted again, so no deleted text stays in the index.
 */
async function embedClaimed(
  { db, path, tenantId, mark }: Pick<CatchUp, "db" | "path" | "tenantId"> & { mark: string },
  results: { docId: string; body: string }[],
): Promise<void> {
  const embedded = db.prepare(
    `UPDATE cortex_embedded SET vec_id = ? WHERE tenant_id = ? AND doc_id = ? AND vec_id = ? RETURNING doc_id AS docId`,
  );
  for (let i = 0; i < results.length; i += EMBED_BATCH) {
    const batch = results.slice(i, i + EMBED_BATCH);
    const vectors = await path.embedder.embed(batch.map((r) => r.body.slice(0, EMBED_CHARS)));
    const ids = await Promise.all(batch.map((r) => vectorId(tenantId, r.docId)));
    await path.index.upsert(
      tenantId,
      batch.map((_, j) => ({ id: ids[j], vector: vectors[j] })),
    );
    const marked = await db.batch<{ docId: string }>(
      batch.map((r, j) => embedded.bind(ids[j], tenantId, r.docId, mark)),
    );
    const lost = batch.filter((_, j) => !marked[j].results.length).map((r) => r.docId);
    if (lost.length) await forgetUnmarked({ db, path, tenantId }, lost);
  }
}

/**
 * Of documents whose claim was lost mid-embedding, deletes the vectors just written for those left
 * with no row: deleted from the cortex, or changed (the trigger dropped the claim, and a stale mark
 * it took over with it). A row there is another catch-up's claim or mark, whose vector stays.
 */
async function forgetUnmarked(
  { db, path, tenantId }: Pick<CatchUp, "db" | "path" | "tenantId">,
  docIds: string[],
): Promise<void> {
  const { results } = await db
    // One bound parameter for the list: D1 takes at most 100, and a batch holds 100 ids.
    .prepare(
      `SELECT doc_id AS docId FROM cortex_embedded WHERE tenant_id = ? AND doc_id IN (SELECT value FROM json_each(?))`,
    )
    .bind(tenantId, JSON.stringify(docIds))
    .all<{ docId: string }>();
  const marked = new Set(results.map((r) => r.docId));
  const gone = docIds.filter((d) => !marked.has(d));
  if (gone.length) await path.index.delete(tenantId, await Promise.all(gone.map((d) => vectorId(tenantId, d))));
}
