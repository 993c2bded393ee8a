// The cortex lives in one Durable Object per shard, a tenant's shard chosen by the routing table:
// each tenant's rows are physically in its own object, search reaches exactly one shard, and
// nothing is written to the D1 cortex any more.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CORTEX_SCHEMA, ensureCortexSchema } from "../../services/cortex/schema";
import { assignShard, cortexFor, defaultShard, shardFor, shardNameOf } from "../../services/cortex/routing";
import { api, createConversation, eventually, send, newTenantWithId } from "./helpers";
import { shardRows } from "./cortex-rows";

const search = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json.data;

describe("cortex routing", () => {
  it("sends a tenant to its own default shard unless the routing table names another", async () => {
    expect(shardFor("ten_a", null)).toBe(defaultShard("ten_a"));
    expect(shardFor("ten_a", "big-1")).toBe("big-1");
    expect(defaultShard("ten_a")).not.toBe(defaultShard("ten_b"));
    const { tenantId } = await newTenantWithId();
    expect(await shardNameOf(env.DB, tenantId)).toBe(defaultShard(tenantId));
    await assignShard(env.DB, tenantId, "moved-1");
    expect(await shardNameOf(env.DB, tenantId)).toBe("moved-1");
    expect((await cortexFor(env as Env, tenantId)).id.equals(env.CORTEX.idFromName("moved-1"))).toBe(true);
  });
});

describe("cortex shards", () => {
  it("keep each tenant's rows in its own object; search reaches only the caller's", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    await send(await createConversation(undefined, a.key), "the quokka-ledger lives in shard A", a.key);
    await send(await createConversation(undefined, b.key), "the wombat-ledger lives in shard B", b.key);
    const rowsOf = (t: string) =>
      eventually(async () => {
        const rows = await shardRows<{ tenant_id: string; body: string }>(
          `SELECT tenant_id, body FROM cortex_docs`,
          [],
          t,
        );
        return rows.length >= 2 ? rows : null;
      });
    const inA = await rowsOf(a.tenantId);
    const inB = await rowsOf(b.tenantId);
    expect(new Set(inA.map((r) => r.tenant_id))).toEqual(new Set([a.tenantId]));
    expect(new Set(inB.map((r) => r.tenant_id))).toEqual(new Set([b.tenantId]));
    expect(inA.some((r) => r.body.includes("quokka-ledger"))).toBe(true);
    expect(inB.some((r) => r.body.includes("quokka-ledger"))).toBe(false);
    expect((await cortexFor(env as Env, a.tenantId)).id.equals((await cortexFor(env as Env, b.tenantId)).id)).toBe(
      false,
    );
    // New writes reach the shards only; the D1 cortex is left to the migration.
    const legacy = await env.DB.prepare(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id IN (?, ?)`)
      .bind(a.tenantId, b.tenantId)
      .first<number>("n");
    expect(legacy).toBe(0);
    expect((await search(a.key, "quokka-ledger")).length).toBeGreaterThan(0);
    expect(await search(b.key, "quokka-ledger")).toEqual([]);
  });

  it("never answer one tenant with another's rows, even when the routing table puts both in one shard", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    await api("POST", "/v1/memory", { text: "platypus-roster for tenant A" }, { key: a.key });
    await assignShard(env.DB, b.tenantId, defaultShard(a.tenantId));
    await api("POST", "/v1/memory", { text: "platypus-roster for tenant B" }, { key: b.key });
    const shared = await shardRows<{ tenant_id: string }>(`SELECT DISTINCT tenant_id FROM cortex_docs`, [], a.tenantId);
    expect(shared.map((r) => r.tenant_id).sort()).toEqual([a.tenantId, b.tenantId].sort());
    const hitsB = await search(b.key, "platypus-roster");
    expect(hitsB).toHaveLength(1);
    expect(hitsB[0].snippet).toContain("tenant B");
  });

  it("create their schema on first use, versioned, and leave it alone after", async () => {
    const { tenantId } = await newTenantWithId();
    const stub = await cortexFor(env as Env, tenantId);
    await runInDurableObject(stub, (_i, state: DurableObjectState) => {
      const version = () =>
        state.storage.sql.exec<{ value: string }>(`SELECT value FROM cortex_meta WHERE key = 'schema_version'`).one()
          .value;
      expect(version()).toBe(String(CORTEX_SCHEMA.length));
      expect(ensureCortexSchema(state.storage)).toBe(CORTEX_SCHEMA.length);
      expect(version()).toBe(String(CORTEX_SCHEMA.length));
      // FTS5 with the porter stemmer runs in the object's SQLite: "planning" finds "plans".
      state.storage.sql.exec(
        `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES ('x', ?, 'memory', 'x', '2026-01-01', 'our plans')`,
        tenantId,
      );
      expect(
        state.storage.sql.exec(`SELECT rowid FROM cortex_fts WHERE cortex_fts MATCH 'planning'`).toArray(),
      ).toHaveLength(1);
    });
  });
});
