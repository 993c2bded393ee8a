// Which D1 shard holds a tenant's cortex. The shards are D1 databases bound by name
// (CORTEX_SHARD_0..N, wrangler.toml; docs/scale.md says how to add one); the routing table (DB's
// cortex_shards) names each tenant's. A tenant's first use assigns it the least full shard (fewest
// tenants), so a shard added to the bindings takes the new tenants from its first deploy on. A
// move between shards is recorded here too (services/cortex/move.ts): while `moving_to` is set,
// writes reach both shards and reads the old one; after the flip, reads go to the new shard and
// writes still reach both for one route TTL (mirrorsOf).
import { and, eq, isNull, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { envConfig } from "../../core/env-config";
import { cortexShards } from "../../db/schema";
import type { SemanticEnv } from "../semantic/select";
import { CortexShard, type ShardParts } from "./shard";

/** A shard's binding name: CORTEX_SHARD_ and its number. */
export const SHARD_BINDING = /^CORTEX_SHARD_(0|[1-9]\d{0,3})$/;

/** What routing needs of a worker's env: the routing table, the shard bindings (found by name), the semantic path. */
export type CortexEnv = Pick<Env, "DB"> &
  SemanticEnv & {
    CORTEX_ROUTE_TTL_SECONDS?: string;
    /** The record: a search marks the messages a regenerate replaced from their heads (shard.ts markSuperseded). */
    BUCKET?: R2Bucket;
  };

/** The shard databases this worker has bound, in number order. */
export function shardNames(env: object): string[] {
  const number = (name: string) => Number(name.slice("CORTEX_SHARD_".length));
  return Object.keys(env)
    .filter((k) => SHARD_BINDING.test(k))
    .sort((a, b) => number(a) - number(b));
}

/** The bound D1 database of a shard; a name that is not a bound shard is a configuration error. */
export function shardDatabase(env: object, name: string): D1Database {
  const db = SHARD_BINDING.test(name) ? (env as Record<string, unknown>)[name] : undefined;
  if (!db) throw new Error(`cortex shard ${name} is not bound to this worker (wrangler.toml d1_databases)`);
  return db as D1Database;
}

export interface CortexRoute {
  /** The shard reads go to, and writes. */
  shard: string;
  /** A move's target: writes go here too until the move flips the route. */
  movingTo: string | null;
  /** A finished move's source, whose copy of the tenant is being removed. */
  drainingFrom: string | null;
  /** The Durable Object shard the tenant's rows were in before D1 (null: its default one). */
  objectShard: string | null;
  /**
   * When the route last changed (ms; its row's `assigned_at`, read at the primary): a move's phases
   * count from it, and a flipped route's writes reach the old shard for one route TTL after it.
   */
  changedAt: number;
}

/** The route fields a move sets and expects (its change time is the row's, set by updateRoute). */
type RouteFields = Omit<CortexRoute, "changedAt">;

/** A lookup per request would put D1 on every search and index run: routes live a while per isolate. */
const routes = new Map<string, { route: CortexRoute; at: number }>();

/** How long an isolate may keep a route (CORTEX_ROUTE_TTL_SECONDS); a move waits this long between phases. */
export const routeTtlMs = (env: CortexEnv) => envConfig(env).CORTEX_ROUTE_TTL_SECONDS * 1000;

/** Drops this isolate's cached routes (a move changed one; tests). */
export function forgetRoute(tenantId?: string): void {
  if (tenantId === undefined) routes.clear();
  else routes.delete(tenantId);
}

/**
 * At the primary: a route is cached for CORTEX_ROUTE_TTL_SECONDS on this read's word, and a move's
 * waits count from its changes there (a lagging replica's older route would outlive the wait).
 */
const readRoute = (db: D1Database, tenantId: string) =>
  // drizzle's D1 driver uses only prepare and batch, which a session has.
  drizzle(db.withSession("first-primary") as unknown as D1Database)
    .select()
    .from(cortexShards)
    .where(eq(cortexShards.tenantId, tenantId))
    .get();

/** The shard with the fewest tenants (ties: the lowest number). */
export async function leastFullShard(env: CortexEnv): Promise<string> {
  const names = shardNames(env);
  if (!names.length) throw new Error("no cortex shard is bound to this worker (CORTEX_SHARD_0.. in wrangler.toml)");
  const counts = await drizzle(env.DB)
    .select({ shard: cortexShards.shard, n: sql<number>`count(*)` })
    .from(cortexShards)
    .groupBy(cortexShards.shard)
    .all();
  const load = (name: string) => counts.find((c) => c.shard === name)?.n ?? 0;
  return names.reduce((best, name) => (load(name) < load(best) ? name : best));
}

/**
 * The tenant's route. A tenant without a shard gets the least full one when `assign` is set
 * (concurrent first writes agree); without it the answer is null, and nothing is written.
 */
export async function routeOf(env: CortexEnv, tenantId: string, opts?: { now?: number }): Promise<CortexRoute>;
export async function routeOf(
  env: CortexEnv,
  tenantId: string,
  opts: { now?: number; assign: false },
): Promise<CortexRoute | null>;
export async function routeOf(
  env: CortexEnv,
  tenantId: string,
  opts: { now?: number; assign?: boolean } = {},
): Promise<CortexRoute | null> {
  const { now = Date.now(), assign = true } = opts;
  const cached = routes.get(tenantId);
  if (cached && now - cached.at < routeTtlMs(env)) return cached.route;
  let row = await readRoute(env.DB, tenantId);
  if (!row?.shard) {
    if (!assign) return null;
    const shard = await leastFullShard(env);
    await drizzle(env.DB)
      .insert(cortexShards)
      .values({ tenantId, shard, assignedAt: new Date(now).toISOString() })
      .onConflictDoUpdate({
        target: cortexShards.tenantId,
        set: { shard, assignedAt: new Date(now).toISOString() },
        setWhere: isNull(cortexShards.shard),
      });
    row = await readRoute(env.DB, tenantId);
  }
  if (!row?.shard) throw new Error(`cortex route of ${tenantId} could not be assigned`);
  const route: CortexRoute = {
    shard: row.shard,
    movingTo: row.movingTo,
    drainingFrom: row.drainingFrom,
    objectShard: row.objectShard,
    changedAt: Date.parse(row.assignedAt),
  };
  routes.set(tenantId, { route, at: now });
  return route;
}

/** Records a tenant's shard outright (a new tenant placed by hand; tests). Moving a tenant with rows is move.ts's. */
export async function assignShard(db: D1Database, tenantId: string, shard: string): Promise<void> {
  const at = new Date().toISOString();
  await drizzle(db)
    .insert(cortexShards)
    .values({ tenantId, shard, assignedAt: at })
    .onConflictDoUpdate({ target: cortexShards.tenantId, set: { shard, assignedAt: at } });
  routes.delete(tenantId);
}

/** Sets route fields only if the row still holds `expect` (a move's phase change; false if another got there first). */
export async function updateRoute(
  db: D1Database,
  tenantId: string,
  change: { expect: Partial<RouteFields>; set: Partial<RouteFields> },
): Promise<boolean> {
  const col = { shard: cortexShards.shard, movingTo: cortexShards.movingTo, drainingFrom: cortexShards.drainingFrom };
  const conditions = [eq(cortexShards.tenantId, tenantId)];
  for (const [k, v] of Object.entries(change.expect) as [keyof typeof col, string | null][])
    conditions.push(v === null ? isNull(col[k]) : eq(col[k], v));
  const res = await drizzle(db)
    .update(cortexShards)
    .set({ ...change.set, assignedAt: new Date().toISOString() })
    .where(and(...conditions))
    .run();
  routes.delete(tenantId);
  return (res.meta.changes ?? 0) > 0;
}

/**
 * The shards a write reaches besides the route's: a move's target until the flip; after the flip,
 * the old shard for one route TTL, as long as an isolate that cached the route before the flip may
 * still read there. Every isolate counts that TTL from the flip's time in the row, so all stop
 * together, whenever they read the route; move.ts drains the old shard a TTL after that.
 */
export function mirrorsOf(env: CortexEnv, route: CortexRoute, now = Date.now()): string[] {
  if (route.movingTo) return [route.movingTo];
  if (route.drainingFrom && now - route.changedAt < routeTtlMs(env)) return [route.drainingFrom];
  return [];
}

const partsOf = (env: CortexEnv, route: CortexRoute): ShardParts => ({
  name: route.shard,
  db: shardDatabase(env, route.shard),
  mirrors: mirrorsOf(env, route).map((name) => shardDatabase(env, name)),
  semantic: env,
  record: env.BUCKET,
});

/**
 * The one way into the cortex from outside it: the tenant's shard (and, during a move, the other
 * shard its writes reach: mirrorsOf). A tenant with no shard yet has no rows: its reads go to the
 * first shard and find nothing, and its first write assigns it one.
 */
export async function cortexFor(env: CortexEnv, tenantId: string): Promise<CortexShard> {
  const route = await routeOf(env, tenantId, { assign: false });
  if (route) return new CortexShard(partsOf(env, route));
  const first = shardNames(env)[0];
  return new CortexShard({
    name: first,
    db: shardDatabase(env, first),
    semantic: env,
    assign: async () => partsOf(env, await routeOf(env, tenantId)),
  });
}
