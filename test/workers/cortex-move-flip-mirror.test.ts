// A cortex move's flip sends reads to the new shard, but an isolate that cached the route before the
// flip still reads the old shard for up to one route TTL: writes keep reaching the old shard for
// that TTL (a note written, or deleted, just after the flip is so in both shards), the old copy is
// drained only one TTL after that, and the move's waits count from the route's change at the
// primary, never from a lagging replica the admin request's bookmark pointed at.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { moveTenantStep, type MoveStep } from "../../services/cortex/move";
import { assignShard, forgetRoute, mirrorsOf, routeOf, shardDatabase, shardNames } from "../../services/cortex/routing";
import { CortexShard } from "../../services/cortex/shard";
import { sessionDatabase } from "../../services/d1-session-database";
import { api, newTenantWithId } from "./helpers";

const [S0, S1] = shardNames(env);
const ids = async (shard: string, tenantId: string) =>
  (
    await shardDatabase(env, shard)
      .prepare(`SELECT DISTINCT ref_id AS id FROM cortex_docs WHERE tenant_id = ? ORDER BY ref_id`)
      .bind(tenantId)
      .all<{ id: string }>()
  ).results.map((r) => r.id);

describe("a cortex move's flip", () => {
  it("keeps writes and deletes reaching the old shard for one route TTL, for isolates still reading it; then drains it", async () => {
    // The mover waits no time between phases; the API's isolate keeps its TTL (60 s).
    const now = { ...(env as Env), CORTEX_ROUTE_TTL_SECONDS: "0" };
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    const post = async (text: string) => {
      const r = await api("POST", "/v1/memory", { text }, { key: t.key });
      expect(r.status).toBe(201);
      return r.json.id as string;
    };
    const before = await post("before the move about ocelotgrove");
    let cursor = 0;
    let s: MoveStep;
    do {
      s = await moveTenantStep(now, { tenantId: t.tenantId, to: S1, cursor, limit: 50 });
      cursor = Number(s.next);
    } while (s.phase !== "flipped" && s.next !== null);
    expect(s.phase).toBe("flipped");

    const after = await post("after the flip about ocelotgrove");
    const gone = await post("after the flip about ocelotgrove, deleted");
    expect((await api("DELETE", `/v1/memory/${gone}`, undefined, { key: t.key })).status).toBe(204);
    // What partsOf builds for the route an isolate cached before the flip: reads the old shard.
    const stale = new CortexShard({
      name: S0,
      db: shardDatabase(env, S0),
      mirrors: [shardDatabase(env, S1)],
      semantic: env as Env,
    });
    const found = (await stale.search(t.tenantId, "ocelotgrove", { limit: 10 })).hits.map((h) => h.id);
    expect(found.sort()).toEqual([before, after].sort());
    expect(await ids(S0, t.tenantId)).toEqual([before, after].sort());

    // The rest of the move: the old shard ends with nothing of the tenant, the new one with both notes.
    const rest: MoveStep[] = [];
    for (cursor = 0; ; ) {
      const step = await moveTenantStep(now, { tenantId: t.tenantId, to: S1, cursor, limit: 50 });
      rest.push(step);
      if (step.next === null) break;
      cursor = Number(step.next);
    }
    expect(rest.at(-1)?.phase).toBe("done");
    expect(await ids(S0, t.tenantId)).toEqual([]);
    expect(await ids(S1, t.tenantId)).toEqual([before, after].sort());
    // A write after the move reaches the new shard only.
    forgetRoute(t.tenantId);
    const later = await post("after the move about ocelotgrove");
    expect(await ids(S0, t.tenantId)).toEqual([]);
    expect(await ids(S1, t.tenantId)).toEqual([before, after, later].sort());
  });

  it("drains the old shard two route TTLs after the flip: one while isolates may still read it (and writes reach it), one for writes still landing", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    expect((await api("POST", "/v1/memory", { text: "a note about the margaytrail" }, { key: t.key })).status).toBe(
      201,
    );
    const ttl = { ...(env as Env), CORTEX_ROUTE_TTL_SECONDS: "60" };
    const at = (seconds: number) => Date.now() + seconds * 1000;
    const run = (seconds: number) =>
      moveTenantStep(ttl, { tenantId: t.tenantId, to: S1, cursor: 0, limit: 50, now: at(seconds) });
    expect((await run(0)).phase).toBe("started");
    expect((await run(61)).phase).toBe("flipped");
    // Every isolate's writes reach the old shard for one TTL from the flip's time, then stop.
    forgetRoute(t.tenantId);
    const route = await routeOf(ttl, t.tenantId);
    expect(route).toMatchObject({ shard: S1, movingTo: null, drainingFrom: S0 });
    expect(mirrorsOf(ttl, route, route.changedAt + 59_000)).toEqual([S0]);
    expect(mirrorsOf(ttl, route, route.changedAt + 60_000)).toEqual([]);
    // The flip was recorded now: 90 s later, isolates stopped writing the old shard only 30 s ago.
    const waited = await run(90);
    expect(waited).toMatchObject({ phase: "waiting", removed: 0 });
    expect(waited.waitSeconds).toBeGreaterThan(0);
    expect(waited.waitSeconds).toBeLessThanOrEqual(30);
    expect(await ids(S0, t.tenantId)).toHaveLength(1);
    expect((await run(125)).phase).toBe("done");
    expect(await ids(S0, t.tenantId)).toEqual([]);
    expect(await ids(S1, t.tenantId)).toHaveLength(1);
  });

  it("counts its waits from the route's change at the primary, not from a lagging replica the request's bookmark chose", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    expect((await api("POST", "/v1/memory", { text: "a note about the tapirbrook" }, { key: t.key })).status).toBe(201);
    // A replica that has not seen the move start: the tenant's row as it was an hour ago.
    const replica = "zz_replica_cortex_shards";
    await env.DB.batch([
      env.DB.prepare(`CREATE TABLE IF NOT EXISTS ${replica} AS SELECT * FROM cortex_shards WHERE 0`),
      env.DB.prepare(`DELETE FROM ${replica} WHERE tenant_id = ?`).bind(t.tenantId),
      env.DB.prepare(`INSERT INTO ${replica} (tenant_id, shard, assigned_at) VALUES (?, ?, ?)`).bind(
        t.tenantId,
        S0,
        new Date(Date.now() - 3_600_000).toISOString(),
      ),
    ]);
    // Its reads answer from that old row; its writes go to the primary, as a session's do.
    const lagging = {
      prepare: (q: string) =>
        env.DB.prepare(/^\s*select\b/i.test(q) ? q.replaceAll(`"cortex_shards"`, `"${replica}"`) : q),
      batch: <T>(statements: D1PreparedStatement[]) => env.DB.batch<T>(statements),
      getBookmark: () => null,
    } as D1DatabaseSession;
    // The admin request's env: its DB is the request's session, started at the old bookmark.
    const request = { ...(env as Env), DB: sessionDatabase(env.DB, lagging), CORTEX_ROUTE_TTL_SECONDS: "60" };
    try {
      const first = await moveTenantStep(request, { tenantId: t.tenantId, to: S1, cursor: 0, limit: 50 });
      expect(first.phase).toBe("started");
      const second = await moveTenantStep(request, { tenantId: t.tenantId, to: S1, cursor: 0, limit: 50 });
      expect(second).toMatchObject({ phase: "waiting", copied: 0 });
      expect(second.waitSeconds).toBeGreaterThan(50);
      expect(await ids(S1, t.tenantId)).toEqual([]);
    } finally {
      await env.DB.prepare(`DROP TABLE IF EXISTS ${replica}`).run();
    }
  });
});
