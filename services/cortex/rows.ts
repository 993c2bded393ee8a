// A tenant's cortex rows as they move between stores: from one D1 shard to another
// (services/cortex/move.ts) and out of the Durable Object shards into D1. A row keeps its doc id,
// so a copy is an upsert: running it again, or after a crash mid-page, changes nothing, and a body
// edited since an earlier copy is brought up to date.
import { type ShardDatabase, tenantRange, UPSERT_DOC } from "./search-index";

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

/** Writes one tenant's rows into a shard (`db`); rows of another tenant are refused. Returns how many were written. */
export async function writeRows(db: ShardDatabase, tenantId: string, rows: readonly CortexRow[]): Promise<number> {
  const upsert = db.prepare(UPSERT_DOC);
  const own = rows.filter((r) => r.tenant_id === tenantId);
  for (let i = 0; i < own.length; i += 49)
    await db.batch([
      tenantRange(db, tenantId),
      ...own
        .slice(i, i + 49)
        .map((r) =>
          upsert.bind(r.doc_id, r.tenant_id, r.conversation_id, r.kind, r.ref_id, r.seq, r.role, r.created_at, r.body),
        ),
    ]);
  return own.length;
}
