// The move of the cortex out of its Durable Object shards (CortexDO) into the D1 shards, one
// bounded step per call: tenants in id order, each tenant's rows in rowid order, read from the
// object its route named (or its default one) and upserted by doc id into its D1 shard. The cursor
// is the tenant and the last rowid moved, so a walk resumes where any earlier (or crashed) call
// stopped, and a repeat rewrites nothing. Removed, with CortexDO, in the release after this one
// (docs/scale.md, "Leaving the Durable Object shards").
import { cortexFor, defaultShard, routeOf, type CortexEnv } from "./routing";

export interface ObjectMoveStep {
  scanned: number;
  moved: number;
  tenants: number;
  /** Pass back as `cursor`; null once every tenant's rows are in D1. */
  next: string | null;
}

export interface ObjectMoveCursor {
  tenantId: string;
  afterRowid: number;
}

export async function moveObjectShards(
  env: CortexEnv & Pick<Env, "CORTEX">,
  cursor: ObjectMoveCursor | null,
  limit: number,
): Promise<ObjectMoveStep> {
  const { results: tenants } = await env.DB.prepare(`SELECT id FROM tenants WHERE id >= ? ORDER BY id LIMIT ?`)
    .bind(cursor?.tenantId ?? "", limit)
    .all<{ id: string }>();
  let scanned = 0;
  let moved = 0;
  let visited = 0;
  for (const { id } of tenants) {
    visited++;
    let after = cursor && id === cursor.tenantId ? cursor.afterRowid : 0;
    const route = await routeOf(env, id);
    const object = env.CORTEX.get(env.CORTEX.idFromName(route.objectShard ?? defaultShard(id)));
    const rows = await object.exportRows(id, after, limit - scanned);
    scanned += rows.length;
    if (rows.length) {
      moved += await (await cortexFor(env, id)).importRows(id, rows);
      after = rows[rows.length - 1].rowid;
    }
    // This page is full: the next call resumes inside this tenant (or, if it had no more, finds none).
    if (scanned >= limit) return { scanned, moved, tenants: visited, next: `${id}:${after}` };
  }
  const last = tenants[tenants.length - 1];
  // Every tenant of this page is done; more tenants may follow the last one.
  const next = tenants.length === limit ? `${last.id}:${Number.MAX_SAFE_INTEGER}` : null;
  return { scanned, moved, tenants: visited, next };
}
