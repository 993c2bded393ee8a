// Which shard (CortexDO) holds a tenant's cortex. By default every tenant is its own shard, named
// after it, so the index grows with tenants and no object holds two tenants' rows. The routing
// table (D1 cortex_shards) overrides that per tenant: the lever for moving a tenant, and the
// place a tenant split across several objects would be recorded (see docs/scale.md).
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { cortexShards } from "../../db/schema";

/** Shard names never collide with one another's tenants: the prefix says whose default it is. */
export const defaultShard = (tenantId: string) => `tenant:${tenantId}`;

/** The routing decision itself: the table's entry for the tenant, else its default shard. */
export function shardFor(tenantId: string, assigned: string | null | undefined): string {
  return assigned ?? defaultShard(tenantId);
}

/** A lookup per request would put D1 on every search and index run: entries live a minute per isolate. */
const ROUTE_TTL_MS = 60_000;
const routes = new Map<string, { shard: string; at: number }>();

export async function shardNameOf(db: D1Database, tenantId: string, now = Date.now()): Promise<string> {
  const cached = routes.get(tenantId);
  if (cached && now - cached.at < ROUTE_TTL_MS) return cached.shard;
  const row = await drizzle(db)
    .select({ shard: cortexShards.shard })
    .from(cortexShards)
    .where(eq(cortexShards.tenantId, tenantId))
    .get();
  const shard = shardFor(tenantId, row?.shard);
  routes.set(tenantId, { shard, at: now });
  return shard;
}

/** Records (or changes) a tenant's shard. Callers moving a tenant copy its rows first. */
export async function assignShard(db: D1Database, tenantId: string, shard: string): Promise<void> {
  const at = new Date().toISOString();
  await drizzle(db)
    .insert(cortexShards)
    .values({ tenantId, shard, assignedAt: at })
    .onConflictDoUpdate({ target: cortexShards.tenantId, set: { shard, assignedAt: at } });
  routes.delete(tenantId);
}

/** The one way into the cortex from outside it: the stub of the tenant's shard. */
export async function cortexFor(env: Pick<Env, "DB" | "CORTEX">, tenantId: string) {
  return env.CORTEX.get(env.CORTEX.idFromName(await shardNameOf(env.DB, tenantId)));
}
