// Reads a tenant's cortex rows where they live: in its D1 shard (the routing table's CORTEX_SHARD_n).
import { env } from "cloudflare:workers";
import { routeOf, shardDatabase, shardNames } from "../../services/cortex/routing";

/**
 * The D1 database of the tenant's shard (the dev tenant's by default). Reading assigns nothing: a
 * tenant without a shard has no rows, and the first shard shows it none.
 */
export async function shardOf(tenantId = "dev"): Promise<D1Database> {
  const route = await routeOf(env as Env, tenantId, { assign: false });
  return shardDatabase(env, route?.shard ?? shardNames(env)[0]);
}

/** Rows of `sql` run in the tenant's shard (the dev tenant's by default). */
export async function shardRows<T = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
  tenantId = "dev",
): Promise<T[]> {
  return (
    await (
      await shardOf(tenantId)
    )
      .prepare(sql)
      .bind(...params)
      .all<T>()
  ).results;
}

/** `SELECT COUNT(*) AS n ...` in the tenant's shard. */
export const shardCount = async (sql: string, params: unknown[] = [], tenantId = "dev") =>
  (await shardRows<{ n: number }>(sql, params, tenantId))[0].n;
