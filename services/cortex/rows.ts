// A tenant's cortex rows as they move from one D1 shard to another (services/cortex/move.ts). A row
// keeps its doc id, and a copy inserts only the rows the new shard lacks: running it again, or after
// a crash mid-page, changes nothing, and a row a write during the move already put in the new shard
// (every write reaches both shards then) is never overwritten by the older body the page read.
import { cjkTerms, INSERT_DOC, type ShardDatabase, tenantRange } from "./search-index";

export interface CortexRow {
  rowid: number;
  doc_id: string;
  tenant_id: string;
  conversation_id: string | null;
  kind: string;
  ref_id: string;
  seq: number | null;
  role: string | null;
  created_at: string;
  body: string;
}

/** The tenant's rows after `afterRowid`, in rowid order: one bounded page of a move. */
export async function readRows(
  db: ShardDatabase,
  tenantId: string,
  page: { after: number; limit: number },
): Promise<CortexRow[]> {
  const { results } = await db
    .prepare(
      `SELECT rowid, doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body FROM cortex_docs WHERE tenant_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`,
    )
    .bind(tenantId, page.after, page.limit)
    .all<CortexRow>();
  return results;
}

/**
 * Writes one tenant's rows into a shard (`db`) where their doc ids are not yet; rows of another
 * tenant are refused. Returns how many were offered. A row's CJK terms are made again from its body
 * (a row the old shard indexed before they existed gains them in the new one).
 */
export async function writeRows(db: ShardDatabase, tenantId: string, rows: readonly CortexRow[]): Promise<number> {
  // A row of the tenant's range (tenantRange first in each batch), only where its doc id is not yet.
  const insert = db.prepare(`${INSERT_DOC} ON CONFLICT(doc_id) DO NOTHING`);
  const own = rows.filter((r) => r.tenant_id === tenantId);
  for (let i = 0; i < own.length; i += 49)
    await db.batch([
      tenantRange(db, tenantId),
      ...own
        .slice(i, i + 49)
        .map((r) =>
          insert.bind(
            r.doc_id,
            r.tenant_id,
            r.conversation_id,
            r.kind,
            r.ref_id,
            r.seq,
            r.role,
            r.created_at,
            r.body,
            cjkTerms(r.body),
          ),
        ),
    ]);
  return own.length;
}

/**
 * Of `rows`, a page just copied from `source` into `target`, deletes from `target` those `source`
 * no longer holds; returns how many. A delete that ran after the page was read reached the new shard
 * before the page did (a no-op there), so the copy brought the row back. Writes during a move reach
 * the old shard first (shard.ts), so a delete this check does not see yet finds the copied row in
 * the new shard and removes it itself.
 */
export async function dropVanished(
  tenantId: string,
  page: { source: ShardDatabase; target: ShardDatabase; rows: readonly CortexRow[] },
): Promise<number> {
  const { source, target, rows } = page;
  if (!rows.length) return 0;
  const { results } = await source
    .prepare(`SELECT doc_id FROM cortex_docs WHERE tenant_id = ? AND doc_id IN (SELECT value FROM json_each(?))`)
    .bind(tenantId, JSON.stringify(rows.map((r) => r.doc_id)))
    .all<{ doc_id: string }>();
  const still = new Set(results.map((r) => r.doc_id));
  const vanished = rows.filter((r) => !still.has(r.doc_id)).map((r) => r.doc_id);
  if (vanished.length)
    await target
      .prepare(`DELETE FROM cortex_docs WHERE tenant_id = ? AND doc_id IN (SELECT value FROM json_each(?))`)
      .bind(tenantId, JSON.stringify(vanished))
      .run();
  return vanished.length;
}

/**
 * Of `rows`, a page just copied from `source` into `target`, the marks of the documents that have a
 * deployed vector (cortex_embedded) go with them: the vector is the tenant's and the document's,
 * shared by both shards, so the new shard's delete trigger can tombstone it (without the mark a
 * document deleted after the move left its vector in the index for good). A document changed since
 * its vector was made has a stale mark (`stale:` and the vector's id, cortex-shard 0005), copied as
 * any mark: the new shard embeds it again, and a delete before that still tombstones the vector;
 * claims in flight are not marks.
 */
export async function copyEmbeddedMarks(
  tenantId: string,
  page: { source: ShardDatabase; target: ShardDatabase; rows: readonly CortexRow[] },
): Promise<number> {
  const { source, target, rows } = page;
  if (!rows.length) return 0;
  const { results } = await source
    .prepare(
      `SELECT doc_id AS docId, vec_id AS vecId FROM cortex_embedded
       WHERE tenant_id = ? AND doc_id IN (SELECT value FROM json_each(?)) AND vec_id NOT LIKE 'claim:%'`,
    )
    .bind(tenantId, JSON.stringify(rows.map((r) => r.doc_id)))
    .all<{ docId: string; vecId: string }>();
  if (!results.length) return 0;
  await target
    .prepare(
      `INSERT INTO cortex_embedded (doc_id, tenant_id, vec_id)
       SELECT m.value ->> 0, ?, m.value ->> 1 FROM json_each(?) m
       WHERE EXISTS (SELECT 1 FROM cortex_docs d WHERE d.doc_id = m.value ->> 0 AND d.tenant_id = ?)
       ON CONFLICT(doc_id) DO NOTHING`,
    )
    .bind(tenantId, JSON.stringify(results.map((r) => [r.docId, r.vecId])), tenantId)
    .run();
  return results.length;
}
