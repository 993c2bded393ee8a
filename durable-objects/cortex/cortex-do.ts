// CortexDO: the cortex's old home, one SQLite Durable Object per shard (by default one per
// tenant). The index now lives in the D1 shards (services/cortex/shard.ts); this class only hands
// its rows out, a page at a time, to the move into D1 (services/cortex/move-objects.ts), and goes
// away in the release after (a `deleted_classes` migration, docs/scale.md).
import { DurableObject } from "cloudflare:workers";
import type { CortexRow } from "../../services/cortex/rows";

export class CortexDO extends DurableObject<Env> {
  /** The tenant's rows after `afterRowid`, in rowid order; none if this object never had a schema. */
  async exportRows(tenantId: string, afterRowid: number, limit: number): Promise<CortexRow[]> {
    const sql = this.ctx.storage.sql;
    const hasTable = sql
      .exec<{ n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'cortex_docs'`)
      .one().n;
    if (!hasTable) return [];
    return sql
      .exec<CortexRow & Record<string, SqlStorageValue>>(
        `SELECT rowid, doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body FROM cortex_docs WHERE tenant_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`,
        tenantId,
        afterRowid,
        limit,
      )
      .toArray();
  }
}
