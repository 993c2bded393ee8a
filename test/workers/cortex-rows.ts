// Reads a tenant's cortex rows where they live: inside its shard's own SQLite (CortexDO).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { cortexFor } from "../../services/cortex/routing";

/** Rows of `sql` run in the tenant's shard (the dev tenant's by default). */
export async function shardRows<T = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
  tenantId = "dev",
): Promise<T[]> {
  const stub = await cortexFor(env as Env, tenantId);
  return runInDurableObject(
    stub,
    (_instance, state) => state.storage.sql.exec(sql, ...(params as SqlStorageValue[])).toArray() as T[],
  );
}

/** `SELECT COUNT(*) AS n ...` in the tenant's shard. */
export const shardCount = async (sql: string, params: unknown[] = [], tenantId = "dev") =>
  (await shardRows<{ n: number }>(sql, params, tenantId))[0].n;
