// The cron tick's two attachment sweeps (uploads never finished, deletes cut short) look across
// every tenant's attachments each 5 minutes: they read through the attachments_status index
// (d1-migrations/0031), so a tick reads only the rows in each sweep's state however many
// attachments exist, rather than the whole table twice. The sweeps run at a clock of 1970 here: nothing of any
// other file is old enough to be swept, so this file changes no shared state.
import { env } from "cloudflare:workers";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { attachments } from "../../db/schema";
import { finishCutShortDeletes } from "../../services/attachments/delete";
import { staleUploads } from "../../services/attachments/store";
import { newTenantWithId } from "./helpers";

/** A D1 binding that records each statement run directly on it, with its binds. */
function recording(real: D1Database) {
  const seen: { sql: string; binds: unknown[] }[] = [];
  const wrap = (statement: D1PreparedStatement, sql: string, binds: unknown[]): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args), sql, args);
        if (prop === "all" || prop === "raw" || prop === "run" || prop === "first") seen.push({ sql, binds });
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query), query, []);
      const value: unknown = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, seen };
}

/** Ready attachments of one tenant: rows no sweep is after. */
async function readyRows(n: number) {
  const { tenantId } = await newTenantWithId();
  const at = new Date(Date.now() - 3 * 86_400_000).toISOString();
  for (let i = 0; i < n; i += 50)
    await env.DB.batch(
      Array.from({ length: Math.min(50, n - i) }, (_, j) =>
        env.DB.prepare(
          `INSERT INTO attachments (id, tenant_id, conversation_id, name, type, size, status, r2_key, facts, created_at, updated_at) VALUES (?, ?, 'conv_sweeps', 'f.txt', 'text/plain', 1, 'ready', 'k', '{}', ?, ?)`,
        ).bind(`att_sweeps${tenantId.slice(-8)}${String(i + j).padStart(8, "0")}`, tenantId, at, at),
      ),
    );
}

describe("the cron tick's attachment sweeps", () => {
  it("read through attachments_status, not the ready rows, whatever the table holds", async () => {
    const N = 300;
    await readyRows(N);
    const rec = recording(env.DB);
    const before = new Date(0).toISOString();
    expect(await staleUploads(rec.db, { singleBefore: before, multipartBefore: before, limit: 200 })).toEqual([]);
    expect(await finishCutShortDeletes({ ...env, DB: rec.db } as Env, { now: 0, limit: 200 })).toBe(0);
    expect(rec.seen.map((s) => s.sql.match(/"status" = \?/) !== null)).toEqual([true, true]);
    for (const { sql, binds } of rec.seen) {
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...binds)
        .all<{ detail: string }>();
      const details = plan.results.map((r) => r.detail).join(" | ");
      expect(details, sql).toMatch(/USING INDEX attachments_status \(status=\?/);
      expect(details, sql).not.toMatch(/SCAN attachments/);
      const again = await env.DB.prepare(sql)
        .bind(...binds)
        .all();
      // Only rows in the sweep's state (other files' open uploads, at most), never the N ready ones.
      expect(again.meta.rows_read, sql).toBeLessThan(N);
    }
  });

  it("has the index db/schema.ts declares, on the columns it names", async () => {
    const declared = getTableConfig(attachments).indexes.map((i) => ({
      name: i.config.name,
      columns: i.config.columns.map((c) => ("name" in c ? c.name : "?")),
    }));
    expect(declared).toEqual([{ name: "attachments_status", columns: ["status", "updated_at"] }]);
    const migrated = await env.DB.prepare(
      `SELECT name FROM pragma_index_info('attachments_status') ORDER BY seqno`,
    ).all<{
      name: string;
    }>();
    expect(migrated.results.map((r) => r.name)).toEqual(["status", "updated_at"]);
  });
});
