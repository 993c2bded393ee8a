// Leaving the Durable Object shards: POST /v1/admin/cortex/move-objects walks the tenants and
// copies each one's rows out of the CortexDO its route named (or its default one) into its D1
// shard, a bounded page per call, resumable by cursor and idempotent; then GET /v1/search finds them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { defaultShard } from "../../services/cortex/routing";
import { shardCount } from "./cortex-rows";
import { ADMIN, api, newTenantWithId } from "./helpers";

/** Rows as a CortexDO held them: its schema (services/cortex/schema.ts, version 1) and a few notes. */
async function seedObject(objectName: string, tenantId: string, bodies: string[]) {
  const stub = env.CORTEX.get(env.CORTEX.idFromName(objectName));
  await runInDurableObject(stub, (_i, state: DurableObjectState) => {
    const sql = state.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS cortex_docs (
      rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE, tenant_id TEXT NOT NULL, conversation_id TEXT,
      kind TEXT NOT NULL, ref_id TEXT NOT NULL, seq INTEGER, role TEXT, created_at TEXT NOT NULL, body TEXT NOT NULL)`);
    bodies.forEach((body, n) =>
      sql.exec(
        `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES (?, ?, 'memory', ?, '2026-01-01T00:00:00.000Z', ?)`,
        `memory:mem_${tenantId}_${n}:00000`,
        tenantId,
        `mem_${tenantId}_${n}`,
        body,
      ),
    );
  });
}

const move = (body: unknown, key = ADMIN) => api("POST", "/v1/admin/cortex/move-objects", body, { key });

async function walk(limit: number, from?: string): Promise<number> {
  let cursor: string | null = from ?? null;
  let steps = 0;
  do {
    const r = await move({ limit, ...(cursor ? { cursor } : {}) });
    expect(r.status).toBe(200);
    expect(r.json.scanned).toBeLessThanOrEqual(limit);
    cursor = r.json.next;
    steps++;
  } while (cursor);
  return steps;
}

const search = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}&kind=memory`, undefined, { key })).json.results;
const inD1 = (tenantId: string) =>
  shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`, [tenantId], tenantId);

describe("moving the Durable Object shards into D1", () => {
  it("copies each tenant's rows from its object into its D1 shard, a bounded page per call, resumably and idempotently", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    await seedObject(
      defaultShard(a.tenantId),
      a.tenantId,
      Array.from({ length: 5 }, (_, i) => `old note ${i} about the narwhal-archive of tenant A`),
    );
    // B was routed to a shared object by the old routing table (0021 kept that as object_shard).
    const shared = `big-${b.tenantId}`;
    await env.DB.prepare(`INSERT INTO cortex_shards (tenant_id, object_shard, assigned_at) VALUES (?, ?, ?)`)
      .bind(b.tenantId, shared, new Date().toISOString())
      .run();
    await seedObject(
      shared,
      b.tenantId,
      Array.from({ length: 3 }, (_, i) => `old note ${i} about the narwhal-archive of tenant B`),
    );
    expect(await search(a.key, "narwhal-archive")).toEqual([]);

    // Started from A's id: pages of 2 rows, so A's rows span several calls.
    const start = [a.tenantId, b.tenantId].sort()[0];
    expect(await walk(2, `${start}:0`)).toBeGreaterThanOrEqual(4);
    expect(await inD1(a.tenantId)).toBe(5);
    expect(await inD1(b.tenantId)).toBe(3);
    const hitsA = await search(a.key, "narwhal-archive");
    expect(hitsA).toHaveLength(5);
    for (const h of hitsA) expect(h.snippet).toContain("tenant A");
    expect(await search(b.key, "narwhal-archive")).toHaveLength(3);

    // Again, from the start and in big pages: nothing doubles.
    await walk(500, `${start}:0`);
    expect(await inD1(a.tenantId)).toBe(5);
    expect(await inD1(b.tenantId)).toBe(3);
  });

  it("refuses a bad cursor or limit with a 400 naming it, and callers without the admin token", async () => {
    const bad = await move({ cursor: "ten x:4" });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toContain("cursor");
    expect((await move({ cursor: "ten_x:-1" })).status).toBe(400);
    expect((await move({ limit: 501 })).status).toBe(400);
    expect((await api("POST", "/v1/admin/cortex/move-objects", {})).status).toBe(401);
  });
});
