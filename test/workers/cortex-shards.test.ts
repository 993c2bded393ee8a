// The cortex lives in sharded D1 databases (CORTEX_SHARD_0..N): the routing table assigns each
// tenant one (a new tenant the least full), search reaches exactly the tenant's shard and answers
// only its rows, and a tenant moves between shards in bounded, resumable, idempotent steps.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { moveTenantStep, type MoveStep } from "../../services/cortex/move";
import {
  assignShard,
  cortexFor,
  forgetRoute,
  leastFullShard,
  routeOf,
  shardDatabase,
  shardNames,
} from "../../services/cortex/routing";
import { searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { note } from "../cortex-docs";
import { spyD1 } from "./d1-spy";
import { shardRows } from "./cortex-rows";
import { ADMIN, api, createConversation, eventually, newTenantWithId, send } from "./helpers";

const search = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json.data;
const [S0, S1] = shardNames(env);
const rowsIn = async (shard: string, tenantId: string) =>
  (
    await shardDatabase(env, shard)
      .prepare(`SELECT doc_id, body FROM cortex_docs WHERE tenant_id = ? ORDER BY doc_id`)
      .bind(tenantId)
      .all<{ doc_id: string; body: string }>()
  ).results;
const tenantsIn = async (shard: string) =>
  (await env.DB.prepare(`SELECT COUNT(*) AS n FROM cortex_shards WHERE shard = ?`).bind(shard).first<number>("n")) ?? 0;

describe("cortex routing", () => {
  it("runs at least two shards, each migrated from d1-migrations/cortex-shard", async () => {
    expect(shardNames(env).length).toBeGreaterThanOrEqual(2);
    for (const name of shardNames(env)) {
      const applied = await shardDatabase(env, name).prepare(`SELECT name FROM d1_migrations ORDER BY id`).all();
      expect(applied.results.map((r) => r.name)).toEqual([
        "0001_cortex_docs.sql",
        "0002_semantic.sql",
        "0003_tenant_fts.sql",
        "0004_cjk_terms.sql",
        "0005_stale_vectors.sql",
      ]);
      // FTS5 with the porter stemmer in each: "planning" finds "plans".
      const db = shardDatabase(env, name);
      const t = `ten_stem_${name}_${Date.now()}`;
      await db
        .prepare(
          `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES (?, ?, 'memory', 'x', '2026-01-01', 'our plans')`,
        )
        .bind(`memory:${t}:00000`, t)
        .run();
      const hit = await db
        .prepare(
          `SELECT d.tenant_id AS t FROM cortex_fts JOIN cortex_docs d ON d.rowid = cortex_fts.rowid WHERE cortex_fts MATCH 'planning' AND d.tenant_id = ?`,
        )
        .bind(t)
        .all();
      expect(hit.results).toHaveLength(1);
    }
  });

  it("assigns a new tenant the least full shard, so new tenants spread over the shards", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const before = { [S0]: await tenantsIn(S0), [S1]: await tenantsIn(S1) };
      const expected = await leastFullShard(env as Env);
      expect(before[expected]).toBe(Math.min(before[S0], before[S1]));
      const { tenantId } = await newTenantWithId();
      const { shard } = await routeOf(env as Env, tenantId);
      expect(shard).toBe(expected);
      seen.add(shard);
    }
    expect(seen).toEqual(new Set([S0, S1]));
  });

  it("reads a route at the primary, whatever session the request's D1 is in (a route is cached on its word)", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S1);
    forgetRoute(t.tenantId);
    const spy = spyD1(env.DB);
    expect((await routeOf({ ...(env as Env), DB: spy.db }, t.tenantId)).shard).toBe(S1);
    expect(spy.sessions).toContain("first-primary");
    expect(spy.inSession.some((q) => /cortex_shards/.test(q))).toBe(true);
    expect(spy.direct.some((q) => /cortex_shards/.test(q))).toBe(false);
  });

  it("keeps an assignment: a tenant's route names the same shard on every use", async () => {
    const { tenantId } = await newTenantWithId();
    const first = (await routeOf(env as Env, tenantId)).shard;
    forgetRoute(tenantId);
    expect((await routeOf(env as Env, tenantId)).shard).toBe(first);
    expect((await cortexFor(env as Env, tenantId)).name).toBe(first);
  });
});

describe("cortex shards", () => {
  it("keep each tenant's rows in its own shard; search reaches only the caller's", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    await assignShard(env.DB, a.tenantId, S0);
    await assignShard(env.DB, b.tenantId, S1);
    await send(await createConversation(undefined, a.key), "the quokka-ledger lives in shard A", a.key);
    await send(await createConversation(undefined, b.key), "the wombat-ledger lives in shard B", b.key);
    const inA = await eventually(async () =>
      (await rowsIn(S0, a.tenantId)).length >= 2 ? rowsIn(S0, a.tenantId) : null,
    );
    await eventually(async () => ((await rowsIn(S1, b.tenantId)).length >= 2 ? true : null));
    expect(inA.some((r) => r.body.includes("quokka-ledger"))).toBe(true);
    // Nothing of A in B's shard and nothing of B in A's.
    expect(await rowsIn(S1, a.tenantId)).toEqual([]);
    expect(await rowsIn(S0, b.tenantId)).toEqual([]);
    // DB holds no index table any more (0022 dropped the single-database cortex).
    const tables = await env.DB.prepare(
      `SELECT name FROM sqlite_master WHERE name IN ('cortex_docs', 'cortex_fts')`,
    ).all();
    expect(tables.results).toEqual([]);
    expect((await search(a.key, "quokka-ledger")).length).toBeGreaterThan(0);
    expect(await search(b.key, "quokka-ledger")).toEqual([]);
    expect(await search(a.key, "wombat-ledger")).toEqual([]);
  });

  it("never answer one tenant with another's rows when both are in one shard", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    await assignShard(env.DB, a.tenantId, S1);
    await assignShard(env.DB, b.tenantId, S1);
    await api("POST", "/v1/memory", { text: "platypus-roster for tenant A" }, { key: a.key });
    await api("POST", "/v1/memory", { text: "platypus-roster for tenant B" }, { key: b.key });
    const shared = await shardRows<{ tenant_id: string }>(
      `SELECT DISTINCT tenant_id FROM cortex_docs WHERE tenant_id IN (?, ?)`,
      [a.tenantId, b.tenantId],
      a.tenantId,
    );
    expect(shared.map((r) => r.tenant_id).sort()).toEqual([a.tenantId, b.tenantId].sort());
    const hitsB = await search(b.key, "platypus-roster");
    expect(hitsB).toHaveLength(1);
    expect(hitsB[0].snippet).toContain("tenant B");
  });

  it("never let one tenant's write change another's row, even where their document ids would meet", async () => {
    const [a, b] = [`ten_a${crypto.randomUUID()}`, `ten_b${crypto.randomUUID()}`];
    const ref = `mem_${crypto.randomUUID()}`;
    const db = shardDatabase(env, S0);
    await upsertDocs(db, [note(a, ref, "the first tenant's aardvark-quota")]);
    await upsertDocs(db, [note(b, ref, "the second tenant's okapi-quota")]);
    expect((await rowsIn(S0, a)).map((r) => r.body)).toEqual(["the first tenant's aardvark-quota"]);
    expect((await searchCortexPage(db, a, { q: "okapi-quota", limit: 5 })).hits).toEqual([]);
    expect((await searchCortexPage(db, a, { q: "aardvark-quota", limit: 5 })).hits).toHaveLength(1);
  });
});

describe("moving a tenant between shards", () => {
  // Routes cached for no time: every phase may follow the one before at once.
  const now = { ...(env as Env), CORTEX_ROUTE_TTL_SECONDS: "0" };

  async function walk(tenantId: string, to: string, limit: number, stop?: (s: MoveStep) => boolean) {
    const steps: MoveStep[] = [];
    let cursor = 0;
    for (;;) {
      const s = await moveTenantStep(now, { tenantId, to, cursor, limit });
      steps.push(s);
      if (s.next === null || stop?.(s)) return steps;
      cursor = Number(s.next);
    }
  }

  it("copies in bounded pages, flips the route, drains the old shard; repeated and resumed steps change nothing", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    for (let i = 0; i < 7; i++)
      expect(
        (await api("POST", "/v1/memory", { text: `moving note ${i} about the ibex-archive` }, { key: t.key })).status,
      ).toBe(201);
    const before = await rowsIn(S0, t.tenantId);
    expect(before).toHaveLength(7);

    // Interrupted after the second copy page; a write in between reaches both shards.
    const first = await walk(t.tenantId, S1, 3, (s) => s.phase === "copying" && s.copied === 3 && Number(s.next) > 0);
    expect(first.filter((s) => s.copied > 3)).toEqual([]);
    expect((await routeOf(now, t.tenantId)).movingTo).toBe(S1);
    forgetRoute(t.tenantId);
    const late = await (await cortexFor(now, t.tenantId)).index(t.tenantId, [
      {
        tenantId: t.tenantId,
        kind: "memory",
        refId: "mem_late",
        conversationId: null,
        seq: null,
        role: null,
        createdAt: "2026-01-01T00:00:00.000Z",
        body: "a late ibex-archive note written during the move",
      },
    ]);
    expect(late).not.toBeNull();
    expect((await rowsIn(S1, t.tenantId)).map((r) => r.doc_id)).toContain("memory:mem_late:00000");
    // Resumed from the start (a lost cursor): the pages already copied are upserts of the same rows.
    const rest = await walk(t.tenantId, S1, 3);
    expect(rest.map((s) => s.phase)).toContain("flipped");
    expect(rest[rest.length - 1].phase).toBe("done");
    expect(rest.filter((s) => s.copied > 3 || s.removed > 3)).toEqual([]);
    const after = await rowsIn(S1, t.tenantId);
    expect(after.map((r) => r.doc_id)).toEqual([...before.map((r) => r.doc_id), "memory:mem_late:00000"].sort());
    expect(await rowsIn(S0, t.tenantId)).toEqual([]);
    // The old shard keeps no rowid range of the tenant; the new one has it, holding every row.
    const range = (shard: string) =>
      shardDatabase(env, shard)
        .prepare(
          `SELECT count(*) AS n FROM cortex_tenant_ranges r JOIN cortex_docs d ON d.tenant_id = r.tenant_id AND d.rowid BETWEEN r.base AND r.base + 4294967295 WHERE r.tenant_id = ?`,
        )
        .bind(t.tenantId)
        .first<number>("n");
    const ranges = (shard: string) =>
      shardDatabase(env, shard)
        .prepare(`SELECT count(*) AS n FROM cortex_tenant_ranges WHERE tenant_id = ?`)
        .bind(t.tenantId)
        .first<number>("n");
    expect(await ranges(S0)).toBe(0);
    expect(await range(S1)).toBe(after.length);
    forgetRoute(t.tenantId);
    expect(await routeOf(now, t.tenantId)).toMatchObject({ shard: S1, movingTo: null, drainingFrom: null });
    expect(await search(t.key, "ibex-archive")).toHaveLength(8);

    // Again, once done: nothing moves, nothing changes.
    expect(await walk(t.tenantId, S1, 3)).toEqual([
      { phase: "done", copied: 0, removed: 0, next: null, waitSeconds: 0 },
    ]);
    expect(await rowsIn(S1, t.tenantId)).toEqual(after);
  });

  /**
   * `db` with `before` run once, just ahead of the first batch written through a session of it:
   * the copy step has read its page from the old shard and is about to write it to the new one.
   */
  function beforeFirstCopyWrite(db: D1Database, before: () => Promise<void>): D1Database {
    let pending: (() => Promise<void>) | null = before;
    const session = (s: D1DatabaseSession): D1DatabaseSession =>
      Object.assign(Object.create(s) as D1DatabaseSession, {
        prepare: s.prepare.bind(s),
        getBookmark: s.getBookmark.bind(s),
        batch: async <T>(statements: D1PreparedStatement[]) => {
          const run = pending;
          pending = null;
          await run?.();
          return s.batch<T>(statements);
        },
      });
    return Object.assign(Object.create(db) as D1Database, {
      prepare: db.prepare.bind(db),
      batch: db.batch.bind(db),
      withSession: (c?: string) => session(db.withSession(c)),
    });
  }

  it("removes from the deployed vector index what the old shard still had to forget, before draining it", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    expect((await api("POST", "/v1/memory", { text: "a note that moves" }, { key: t.key })).status).toBe(201);
    // A document deleted before the move whose vector's delete had failed: its tombstone waits.
    await shardDatabase(env, S0)
      .prepare(`INSERT INTO cortex_vectors_gone (tenant_id, vec_id) VALUES (?, ?)`)
      .bind(t.tenantId, "vec_of_a_deleted_note")
      .run();
    const deleted: string[] = [];
    const deployed = {
      ...now,
      AI: {} as Ai,
      VECTORIZE: {
        deleteByIds: async (ids: string[]) => {
          deleted.push(...ids);
          return { mutationId: "m" };
        },
      } as unknown as VectorizeIndex,
    };
    let cursor = 0;
    for (;;) {
      const s = await moveTenantStep(deployed, { tenantId: t.tenantId, to: S1, cursor, limit: 100 });
      if (s.next === null) break;
      cursor = Number(s.next);
    }
    expect(deleted).toEqual(["vec_of_a_deleted_note"]);
    const left = await shardDatabase(env, S0)
      .prepare(`SELECT count(*) AS n FROM cortex_vectors_gone WHERE tenant_id = ?`)
      .bind(t.tenantId)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("brings the documents' deployed-vector marks along, so a delete after the move still removes the vector (claims stay behind)", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    for (const text of ["a note whose vector moves", "a note being embedded"])
      expect((await api("POST", "/v1/memory", { text }, { key: t.key })).status).toBe(201);
    const s0 = shardDatabase(env, S0);
    const docs = (
      await s0
        .prepare(`SELECT doc_id AS id FROM cortex_docs WHERE tenant_id = ? ORDER BY rowid`)
        .bind(t.tenantId)
        .all<{ id: string }>()
    ).results.map((r) => r.id);
    expect(docs).toHaveLength(2);
    // The first has a vector in the shared index; the second is claimed by a catch-up still embedding it.
    await s0.batch([
      s0.prepare(`DELETE FROM cortex_embedded WHERE tenant_id = ?`).bind(t.tenantId),
      s0
        .prepare(`INSERT INTO cortex_embedded (doc_id, tenant_id, vec_id) VALUES (?, ?, 'vec_moved')`)
        .bind(docs[0], t.tenantId),
      s0
        .prepare(`INSERT INTO cortex_embedded (doc_id, tenant_id, vec_id) VALUES (?, ?, 'claim:1')`)
        .bind(docs[1], t.tenantId),
    ]);
    const deployed = {
      ...now,
      AI: {} as Ai,
      VECTORIZE: { deleteByIds: async () => ({ mutationId: "m" }) } as unknown as VectorizeIndex,
    };
    let cursor = 0;
    for (;;) {
      const s = await moveTenantStep(deployed, { tenantId: t.tenantId, to: S1, cursor, limit: 100 });
      if (s.next === null) break;
      cursor = Number(s.next);
    }
    const s1 = shardDatabase(env, S1);
    const marks = await s1
      .prepare(`SELECT doc_id AS doc, vec_id AS vec FROM cortex_embedded WHERE tenant_id = ?`)
      .bind(t.tenantId)
      .all<{ doc: string; vec: string }>();
    expect(marks.results).toEqual([{ doc: docs[0], vec: "vec_moved" }]);
    // Deleted in the new shard: its vector is tombstoned there, for the index to forget.
    await s1.prepare(`DELETE FROM cortex_docs WHERE doc_id = ?`).bind(docs[0]).run();
    const gone = await s1
      .prepare(`SELECT vec_id AS vec FROM cortex_vectors_gone WHERE tenant_id = ?`)
      .bind(t.tenantId)
      .all<{ vec: string }>();
    expect(gone.results).toEqual([{ vec: "vec_moved" }]);
  });

  it("never brings back what a delete removed while the copy was between reading a page and writing it", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    const kept = await createConversation(undefined, t.key);
    const gone = await createConversation(undefined, t.key);
    expect((await send(kept, "the okapi-ledger stays", t.key)).status).toBe(200);
    expect((await send(gone, "the okapi-ledger goes with its conversation", t.key)).status).toBe(200);
    const note = await api("POST", "/v1/memory", { text: "an okapi-ledger note to delete" }, { key: t.key });
    expect(note.status).toBe(201);
    await eventually(async () => (await rowsIn(S0, t.tenantId)).length >= 5);
    const gonePrefix = [`memory:${note.json.id}:`];
    const inGone = async (shard: string) =>
      (
        await shardDatabase(env, shard)
          .prepare(`SELECT doc_id FROM cortex_docs WHERE tenant_id = ? AND (conversation_id = ? OR doc_id LIKE ?)`)
          .bind(t.tenantId, gone, `${gonePrefix[0]}%`)
          .all<{ doc_id: string }>()
      ).results.map((r) => r.doc_id);
    expect((await inGone(S0)).length).toBeGreaterThanOrEqual(3);

    // The note and the second conversation are deleted (through the API, both shards written)
    // after the copy read its page, before it writes the page to the new shard.
    const hooked = {
      ...now,
      [S1]: beforeFirstCopyWrite(shardDatabase(env, S1), async () => {
        forgetRoute(t.tenantId);
        expect((await api("DELETE", `/v1/memory/${note.json.id}`, undefined, { key: t.key })).status).toBe(204);
        expect((await api("DELETE", `/v1/conversations/${gone}`, undefined, { key: t.key })).status).toBe(204);
        expect(await inGone(S0)).toEqual([]);
      }),
    };
    let cursor = 0;
    const phases: string[] = [];
    for (;;) {
      const s = await moveTenantStep(hooked, { tenantId: t.tenantId, to: S1, cursor, limit: 100 });
      phases.push(s.phase);
      if (s.next === null) break;
      cursor = Number(s.next);
    }
    expect(phases).toContain("flipped");
    expect(await inGone(S1)).toEqual([]);
    expect(await inGone(S0)).toEqual([]);
    expect(await rowsIn(S0, t.tenantId)).toEqual([]);
    expect((await rowsIn(S1, t.tenantId)).length).toBeGreaterThanOrEqual(2);
    forgetRoute(t.tenantId);
    const hits = await search(t.key, "okapi-ledger");
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.conversationId === kept)).toBe(true);
  });

  it("never puts back an older body over a note edited while the copy was between reading a page and writing it", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    const note = await api("POST", "/v1/memory", { text: "the first wording of the tapir-index note" }, { key: t.key });
    expect(note.status).toBe(201);
    const hooked = {
      ...now,
      [S1]: beforeFirstCopyWrite(shardDatabase(env, S1), async () => {
        forgetRoute(t.tenantId);
        const edit = { text: "the second wording of the tapir-index note" };
        expect((await api("PATCH", `/v1/memory/${note.json.id}`, edit, { key: t.key })).status).toBe(200);
      }),
    };
    let cursor = 0;
    for (;;) {
      const s = await moveTenantStep(hooked, { tenantId: t.tenantId, to: S1, cursor, limit: 100 });
      if (s.next === null) break;
      cursor = Number(s.next);
    }
    const bodies = (await rowsIn(S1, t.tenantId)).map((r) => r.body);
    expect(bodies).toHaveLength(1);
    // The note's title keeps the first wording; its text is the edit's.
    expect(bodies[0]).toContain("the second wording of the tapir-index note");
    expect(await rowsIn(S0, t.tenantId)).toEqual([]);
  });

  it("is an admin route: waits for cached routes between phases, refuses a second target, a bad body and callers without the admin token", async () => {
    const t = await newTenantWithId();
    await assignShard(env.DB, t.tenantId, S0);
    const move = (body: unknown, tenant = t.tenantId, key = ADMIN) =>
      api("POST", `/v1/admin/cortex/tenants/${tenant}/move`, body, { key });
    const started = await move({ to: S1 });
    expect(started.status).toBe(200);
    expect(started.json).toMatchObject({ phase: "started", next: "0" });
    // Every isolate may still hold the old route for CORTEX_ROUTE_TTL_SECONDS: no copy before that.
    const again = await move({ to: S1, cursor: "0" });
    expect(again.json.phase).toBe("waiting");
    expect(again.json.waitSeconds).toBeGreaterThan(0);
    expect((await move({ to: S0 })).status).toBe(409);
    const bad = await move({ to: "CORTEX_SHARD_x" });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toContain("to");
    expect((await move({ to: "CORTEX_SHARD_99" })).status).toBe(400);
    expect((await move({ to: S1, cursor: "-1" })).status).toBe(400);
    expect((await move({ to: S1 }, "ten_nobody")).status).toBe(404);
    expect((await move({ to: S1 }, t.tenantId, t.key)).status).toBe(401);
    const shards = await api("GET", "/v1/admin/cortex/shards", undefined, { key: ADMIN });
    expect(shards.json.shards.map((s: { shard: string }) => s.shard)).toEqual(shardNames(env));
  });
});
