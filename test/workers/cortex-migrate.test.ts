// Moving the D1 cortex into the shards: POST /v1/admin/cortex/migrate walks the old rows a bounded
// page at a time, each tenant's rows into its own shard, resumable by cursor and idempotent; then
// GET /v1/search finds them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN, api, newTenantWithId } from "./helpers";
import { shardCount } from "./cortex-rows";

/** A row as the D1 cortex held it before the shards. */
const seed = (tenantId: string, n: number, body: string) =>
  env.DB.prepare(
    `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body) VALUES (?, ?, NULL, 'memory', ?, NULL, NULL, ?, ?)`,
  )
    .bind(`memory:mem_${tenantId}_${n}:00000`, tenantId, `mem_${tenantId}_${n}`, "2026-01-01T00:00:00.000Z", body)
    .run();

const migrate = (body: unknown) => api("POST", "/v1/admin/cortex/migrate", body, { key: ADMIN });

async function walk(limit: number): Promise<number> {
  let cursor: string | null = null;
  let steps = 0;
  do {
    const r = await migrate({ limit, ...(cursor ? { cursor } : {}) });
    expect(r.status).toBe(200);
    expect(r.json.scanned).toBeLessThanOrEqual(limit);
    cursor = r.json.next;
    steps++;
  } while (cursor);
  return steps;
}

const search = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}&kind=memory`, undefined, { key })).json.results;

describe("cortex migration", () => {
  it("moves each tenant's old D1 rows into its shard, a bounded page per call, resumably and idempotently", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    for (let i = 0; i < 5; i++) {
      await seed(a.tenantId, i, `old note ${i} about the narwhal-archive of tenant A`);
      if (i < 3) await seed(b.tenantId, i, `old note ${i} about the narwhal-archive of tenant B`);
    }
    expect(await search(a.key, "narwhal-archive")).toEqual([]);

    expect(await walk(3)).toBeGreaterThanOrEqual(3);
    const hitsA = await search(a.key, "narwhal-archive");
    expect(hitsA).toHaveLength(5);
    for (const h of hitsA) expect(h.snippet).toContain("tenant A");
    expect(await search(b.key, "narwhal-archive")).toHaveLength(3);
    expect(
      await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`, [a.tenantId], a.tenantId),
    ).toBe(5);
    expect(
      await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`, [b.tenantId], b.tenantId),
    ).toBe(3);

    // Again, in one page: nothing doubles. The D1 rows stay until a later migration drops them.
    await walk(500);
    expect(
      await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`, [a.tenantId], a.tenantId),
    ).toBe(5);
    expect(await search(a.key, "narwhal-archive")).toHaveLength(5);
    expect(
      await env.DB.prepare(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`)
        .bind(a.tenantId)
        .first<number>("n"),
    ).toBe(5);
  });

  it("refuses a bad cursor or limit with a 400 naming it, and callers without the admin token", async () => {
    const bad = await migrate({ cursor: "and:4" });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toContain("cursor");
    expect((await migrate({ limit: 501 })).status).toBe(400);
    expect((await api("POST", "/v1/admin/cortex/migrate", {})).status).toBe(401);
  });
});
