// The D1 cortex's rows, moved into the shards. A row keeps its doc id, so the move is an upsert:
// running it again (or after a crash mid-page) rewrites nothing. The D1 tables are only read here.

export interface LegacyCortexRow {
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

/** Rows after `afterRowid` in rowid order: a page of the move, whichever tenants it holds. */
export async function readLegacyRows(db: D1Database, afterRowid: number, limit: number): Promise<LegacyCortexRow[]> {
  const { results } = await db
    .prepare(
      `SELECT rowid, doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body FROM cortex_docs WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    )
    .bind(afterRowid, limit)
    .all<LegacyCortexRow>();
  return results;
}

/** Writes one tenant's moved rows into its shard (`db` is the shard's); rows of another tenant are refused. */
export async function importLegacyRows(
  db: D1Database,
  tenantId: string,
  rows: readonly LegacyCortexRow[],
): Promise<number> {
  const upsert = db.prepare(
    `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(doc_id) DO NOTHING`,
  );
  const own = rows.filter((r) => r.tenant_id === tenantId);
  if (own.length)
    await db.batch(
      own.map((r) =>
        upsert.bind(r.doc_id, r.tenant_id, r.conversation_id, r.kind, r.ref_id, r.seq, r.role, r.created_at, r.body),
      ),
    );
  return own.length;
}
