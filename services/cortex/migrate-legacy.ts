// One bounded step of moving the D1 cortex into the shards: a page of rows in rowid order, each
// tenant's part sent to its shard. The cursor is the last rowid moved, so the walk resumes where
// any earlier call (or a crashed one) stopped; rows are upserted by doc id, so repeats are harmless.
// Removed in version 0.2.0 with legacy-rows.ts and the D1 tables (docs/api-notes.md, "Its end").
import { cortexFor } from "./routing";
import { readLegacyRows } from "./legacy-rows";

export interface MigrateStep {
  scanned: number;
  moved: number;
  tenants: number;
  /** Pass back as `cursor`; null once every row has been moved. */
  next: string | null;
}

export async function migrateLegacyCortex(env: Env, cursor: number, limit: number): Promise<MigrateStep> {
  const rows = await readLegacyRows(env.DB, cursor, limit);
  const byTenant = new Map<string, typeof rows>();
  for (const r of rows) byTenant.set(r.tenant_id, [...(byTenant.get(r.tenant_id) ?? []), r]);
  let moved = 0;
  for (const [tenantId, own] of byTenant) moved += await (await cortexFor(env, tenantId)).importRows(tenantId, own);
  const last = rows[rows.length - 1];
  return {
    scanned: rows.length,
    moved,
    tenants: byTenant.size,
    next: rows.length === limit ? String(last.rowid) : null,
  };
}
