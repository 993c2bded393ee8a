// The cortex shard's D1 face over node:sqlite, for the benches that run the shipped cortex
// functions (services/cortex/search-index.ts) in-process: prepare/bind/all/first/run, batch (one
// transaction, as D1's), and withSession (node:sqlite has no replicas: a session is the database).
// The schema is the shard's own: d1-migrations/cortex-shard/, applied in order.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../stack.mjs";
import { tenantText } from "./scale-text.mjs";

const SHARD_MIGRATIONS = join(ROOT, "d1-migrations", "cortex-shard");

/** The shard schema's SQL files, in order (what `wrangler d1 migrations apply` runs on a shard). */
export function cortexShardSchema() {
  return readdirSync(SHARD_MIGRATIONS)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => readFileSync(join(SHARD_MIGRATIONS, f), "utf8"));
}

/** A node:sqlite DatabaseSync with the shard schema applied. */
export function migrateShard(db) {
  for (const sql of cortexShardSchema()) db.exec(sql);
  return db;
}

/**
 * `n` messages of a generated tenant (scale-text.mjs, seeded) written straight into a migrated
 * shard's cortex_docs, in one transaction; returns the tenant's text generator (for its queries).
 */
export function insertTenantMessages(db, { tenant, n, seed }) {
  const text = tenantText(seed);
  const insert = db.prepare(
    `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body) VALUES (?, ?, 'c', 'message', ?, ?, 'user', '2026-01-01', ?)`,
  );
  db.exec("BEGIN");
  for (let i = 0; i < n; i++) insert.run(`message:${tenant}-${i}:00000`, tenant, `${tenant}-${i}`, i, text.message());
  db.exec("COMMIT");
  return text;
}

/** node:sqlite (DatabaseSync) in the shape of the D1 calls the cortex functions make. */
export function d1Over(db) {
  const statement = (query, params = []) => ({
    bind: (...p) =>
      statement(
        query,
        p.map((v) => (v === undefined ? null : v)),
      ),
    all: async () => ({ results: db.prepare(query).all(...params), success: true, meta: {} }),
    first: async (column) => {
      const row = db.prepare(query).get(...params);
      return row ? (column ? row[column] : row) : null;
    },
    run: async () => ({ results: [], success: true, meta: { changes: db.prepare(query).run(...params).changes } }),
    runSync: () => db.prepare(query).all(...params),
  });
  const face = {
    prepare: (query) => statement(query),
    batch: async (statements) => {
      db.exec("BEGIN");
      try {
        const out = statements.map((s) => ({ results: s.runSync(), success: true, meta: {} }));
        db.exec("COMMIT");
        return out;
      } catch (err) {
        db.exec("ROLLBACK");
        throw err;
      }
    },
    withSession: () => ({ ...face, getBookmark: () => null }),
  };
  return face;
}
