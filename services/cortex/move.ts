// Moving a tenant's cortex from one D1 shard to another, one bounded step per call. The routing
// table records where the move is, so any step may be repeated, interrupted or resumed:
//
//   1. start:  `moving_to` is set; from now on every write reaches both shards (routing.ts).
//   2. wait:   until every isolate's cached route has the move (CORTEX_ROUTE_TTL_SECONDS), so no
//              write can still land in the old shard alone.
//   3. copy:   the tenant's rows, a page per call in rowid order (`cursor`: the last rowid copied),
//              inserted by doc id into the new shard where missing; then the page's rows the old
//              shard no longer holds (deleted after the page was read) are deleted from the new one,
//              so the copy never brings a deleted row back. Then the route flips: reads go to the
//              new shard, and writes still reach both (routing.ts mirrorsOf).
//   4. wait:   one route TTL, until no isolate still reads the old shard (one that cached the route
//              before the flip reads there that long, and finds the writes made since); then every
//              isolate's writes reach the new shard alone (each counts from the flip's time).
//   5. wait:   one route TTL more, so that no write begun before then still lands in the old shard.
//   6. drain:  the old shard's copy is deleted, a page per call; then the move is done.
//
// The waits count from the route's last change at the primary (its `assigned_at`), never from a
// replica's older copy. A repeated copy page rewrites nothing (doc ids are kept); a lost cursor
// restarts the copy from 0.
import { forgetRoute, routeOf, routeTtlMs, shardDatabase, updateRoute, type CortexEnv } from "./routing";
import { copyEmbeddedMarks, dropVanished } from "./rows";
import { CortexShard, rowsOf } from "./shard";
import { forgetGone } from "../semantic/catch-up";
import { semanticPathFor } from "../semantic/select";

export type MovePhase = "started" | "waiting" | "copying" | "flipped" | "draining" | "done";

export interface MoveStep {
  phase: MovePhase;
  copied: number;
  removed: number;
  /** Pass back as `cursor`; null once the move is done. */
  next: string | null;
  /** While waiting: seconds before the next step can make progress. */
  waitSeconds: number;
}

export class MoveConflict extends Error {}

export interface MoveRequest {
  tenantId: string;
  to: string;
  /** The last rowid copied (the previous step's `next`). */
  cursor: number;
  limit: number;
  now?: number;
}

const step = (phase: MovePhase, next: string | null, extra: Partial<MoveStep> = {}): MoveStep => ({
  phase,
  copied: 0,
  removed: 0,
  next,
  waitSeconds: 0,
  ...extra,
});

export async function moveTenantStep(env: CortexEnv, req: MoveRequest): Promise<MoveStep> {
  const { tenantId, to, limit } = req;
  const now = req.now ?? Date.now();
  const target = shardDatabase(env, to);
  // Read at the primary (routeOf), with the time of its last change: a phase's start.
  forgetRoute(tenantId);
  const route = await routeOf(env, tenantId, { now });
  /** How long until `ttls` route TTLs have passed since the route's last change. */
  const waitLeft = (ttls: number) => Math.max(0, ttls * routeTtlMs(env) - (now - route.changedAt));
  const waiting = (next: string, left: number) => step("waiting", next, { waitSeconds: Math.ceil(left / 1000) });

  if (route.shard === to && !route.movingTo) {
    if (!route.drainingFrom) return step("done", null);
    // One TTL of writes reaching the old shard after the flip, one more for those still landing.
    if (waitLeft(2) > 0) return waiting("0", waitLeft(2));
    const removed = await drain(env, shardDatabase(env, route.drainingFrom), { tenantId, limit });
    if (removed < limit)
      await updateRoute(env.DB, tenantId, {
        expect: { shard: to, drainingFrom: route.drainingFrom },
        set: { drainingFrom: null },
      });
    return step(removed < limit ? "done" : "draining", removed < limit ? null : "0", { removed });
  }
  if (route.drainingFrom)
    throw new MoveConflict(
      `the tenant's previous move is still removing its copy from ${route.drainingFrom}: run that move (to ${route.shard}) to the end first`,
    );
  if (route.movingTo && route.movingTo !== to)
    throw new MoveConflict(`the tenant is already moving to ${route.movingTo}: run that move to the end first`);
  if (!route.movingTo) {
    await updateRoute(env.DB, tenantId, { expect: { shard: route.shard, movingTo: null }, set: { movingTo: to } });
    return step("started", "0", { waitSeconds: Math.ceil(routeTtlMs(env) / 1000) });
  }
  if (waitLeft(1) > 0) return waiting(String(req.cursor), waitLeft(1));
  const source = shardDatabase(env, route.shard);
  const rows = await rowsOf(source, tenantId, { after: req.cursor, limit });
  const copied = await new CortexShard({ name: to, db: target }).importRows(tenantId, rows);
  const page = { source: source.withSession("first-primary"), target, rows };
  await dropVanished(tenantId, page);
  if (semanticPathFor(env, target)?.mode === "deployed") await copyEmbeddedMarks(tenantId, page);
  if (rows.length === limit) return step("copying", String(rows[rows.length - 1].rowid), { copied });
  await updateRoute(env.DB, tenantId, {
    expect: { shard: route.shard, movingTo: to },
    set: { shard: to, movingTo: null, drainingFrom: route.shard },
  });
  return step("flipped", "0", { copied, waitSeconds: Math.ceil((2 * routeTtlMs(env)) / 1000) });
}

/**
 * Deletes up to `limit` of the tenant's rows from the old shard; returns how many went. Its vector
 * bookkeeping goes first, so the delete leaves no tombstones that would remove the vectors the
 * new shard's documents share (their ids are the tenant's and the document's). The vectors of
 * documents deleted before the move, whose removal from the deployed index had failed, are
 * removed first: once their tombstones go, nothing would remove them (a failure fails the step,
 * which the operator runs again).
 */
async function drain(env: CortexEnv, db: D1Database, { tenantId, limit }: { tenantId: string; limit: number }) {
  const path = semanticPathFor(env, db);
  if (path?.mode === "deployed") await forgetGone(db, path, tenantId);
  await db.batch([
    db.prepare(`DELETE FROM cortex_embedded WHERE tenant_id = ?`).bind(tenantId),
    db.prepare(`DELETE FROM local_vectors WHERE tenant_id = ?`).bind(tenantId),
    db.prepare(`DELETE FROM cortex_vectors_gone WHERE tenant_id = ?`).bind(tenantId),
  ]);
  // The page's rowids first: D1's change count includes the FTS5 triggers' rows.
  const { results } = await db
    .prepare(`SELECT rowid AS id FROM cortex_docs WHERE tenant_id = ? ORDER BY rowid LIMIT ?`)
    .bind(tenantId, limit)
    .all<{ id: number }>();
  if (results.length)
    await db
      .prepare(`DELETE FROM cortex_docs WHERE tenant_id = ? AND rowid IN (SELECT value FROM json_each(?))`)
      .bind(tenantId, JSON.stringify(results.map((r) => r.id)))
      .run();
  // Drained (the last page): the tenant's rowid range in this shard goes too.
  if (results.length < limit)
    await db.prepare(`DELETE FROM cortex_tenant_ranges WHERE tenant_id = ?`).bind(tenantId).run();
  return results.length;
}
