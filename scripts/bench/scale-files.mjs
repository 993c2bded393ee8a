// What bench:scale reads from disk: the SQLite files wrangler dev keeps for the cortex shards
// (D1 databases CORTEX_SHARD_n; before 0.3.0 CortexDO objects, stackFiles tells which) and for DB, under the stack's persist folder (v3/do/<worker>-<class>/<id>.sqlite,
// v3/d1/miniflare-D1DatabaseObject/<id>.sqlite). A file is never opened where the running stack
// writes it: it is copied with its WAL, and the copy is checkpointed so its size is what the
// object's storage really holds.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The objects' .sqlite files under `<persist>/v3/<kind>/` in folders whose name contains `match` (miniflare's own metadata.sqlite aside). */
export function sqliteFiles(persistDir, kind, match) {
  const root = join(persistDir, "v3", kind);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => d.includes(match))
    .flatMap((d) =>
      readdirSync(join(root, d))
        .filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")
        .map((f) => join(root, d, f)),
    );
}

/** Runs `fn(db, bytes)` on a private, checkpointed copy of `file`; `bytes` is the copy's size. */
export function withCopy(file, fn) {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-scale-"));
  const copy = join(dir, "db.sqlite");
  try {
    copyFileSync(file, copy);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    const db = new DatabaseSync(copy);
    try {
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      return fn(db, statSync(copy).size);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The names of the tables `file` holds. */
const tablesOf = (file) =>
  withCopy(
    file,
    (db) =>
      new Set(
        db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
          .map((r) => r.name),
      ),
  );

/**
 * The stack's database files: DB (the D1 database holding `tenants`) and the cortex shards, either
 * the D1 shard databases (CORTEX_SHARD_n, 0.3.0 on: D1 files holding `cortex_docs` and no `tenants`)
 * or, in a checkout from before, the CortexDO objects' files. The same bench reads either layout.
 */
export function stackFiles(persistDir) {
  const d1 = sqliteFiles(persistDir, "d1", "D1DatabaseObject").map((file) => ({ file, tables: tablesOf(file) }));
  const db = d1.filter((f) => f.tables.has("tenants"));
  if (db.length !== 1) throw new Error(`expected one D1 file holding tenants under ${persistDir}, found ${db.length}`);
  const d1Shards = d1.filter((f) => !f.tables.has("tenants") && f.tables.has("cortex_docs")).map((f) => f.file);
  return d1Shards.length
    ? { db: db[0].file, layout: "D1 cortex shard databases", shards: d1Shards }
    : { db: db[0].file, layout: "CortexDO objects' SQLite files", shards: sqliteFiles(persistDir, "do", "CortexDO") };
}

/** The tenants whose documents a shard file holds. */
export const tenantsIn = (file) =>
  withCopy(file, (db) =>
    tablesOf(file).has("cortex_docs")
      ? db
          .prepare("SELECT DISTINCT tenant_id AS t FROM cortex_docs")
          .all()
          .map((r) => r.t)
      : [],
  );

const one = (db, sql, ...params) => Object.values(db.prepare(sql).get(...params) ?? {})[0] ?? 0;

/**
 * One cortex shard as stored: its bytes (checkpointed; `diskBytes` as found, WAL included), its
 * rows (cortex_docs, one per chunk; the FTS5 index's own tables), the messages it indexes, whose
 * tenant(s) they are, and bytes per table (dbstat).
 */
export function measureShard(file) {
  return withCopy(file, (db, bytes) => {
    const tables = new Set(
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => r.name),
    );
    // As found: the main file and the WAL the object had not checkpointed yet.
    const diskBytes = statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    if (!tables.has("cortex_docs"))
      return { file, bytes, diskBytes, tenants: [], docs: 0, messages: 0, ftsRows: 0, byTable: {} };
    const byTable = {};
    for (const r of db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all())
      byTable[r.name] = r.bytes;
    return {
      file,
      bytes,
      diskBytes,
      tenants: db
        .prepare("SELECT DISTINCT tenant_id AS t FROM cortex_docs")
        .all()
        .map((r) => r.t),
      docs: one(db, "SELECT COUNT(*) FROM cortex_docs"),
      messages: one(db, "SELECT COUNT(DISTINCT ref_id) FROM cortex_docs WHERE kind = 'message'"),
      ftsRows: ["cortex_fts_data", "cortex_fts_idx", "cortex_fts_docsize"].reduce(
        (n, t) => n + (tables.has(t) ? one(db, `SELECT COUNT(*) FROM ${t}`) : 0),
        0,
      ),
      byTable,
    };
  });
}

/**
 * Every row of every table (SQLite's and migration bookkeeping aside), keyed by its primary key
 * (by rowid where there is none: a rowid can be reused by the next insert, a key is not).
 */
export function snapshotTables(file) {
  return withCopy(file, (db) => {
    const snap = new Map();
    const names = db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations'",
      )
      .all();
    for (const { name, sql } of names) {
      if (/CREATE VIRTUAL TABLE/i.test(sql ?? "")) continue; // an FTS table's rows are its shadow tables'
      const pk = db
        .prepare(`PRAGMA table_info("${name}")`)
        .all()
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      const rows = new Map();
      const all = db.prepare(pk.length ? `SELECT * FROM "${name}"` : `SELECT rowid AS __rowid, * FROM "${name}"`).all();
      for (const r of all) {
        const { __rowid, ...rest } = r;
        const body = JSON.stringify(rest, (_, v) =>
          typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v,
        );
        rows.set(pk.length ? JSON.stringify(pk.map((c) => rest[c])) : String(__rowid), body);
      }
      snap.set(name, rows);
    }
    return snap;
  });
}

/** Rows inserted, updated and deleted between two snapshots, per table that changed. */
export function diffSnapshots(before, after) {
  const out = {};
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name) ?? new Map();
    const b = after.get(name) ?? new Map();
    let inserted = 0;
    let updated = 0;
    let deleted = 0;
    for (const [k, v] of b) {
      if (!a.has(k)) inserted++;
      else if (a.get(k) !== v) updated++;
    }
    for (const k of a.keys()) if (!b.has(k)) deleted++;
    if (inserted || updated || deleted) out[name] = { inserted, updated, deleted };
  }
  return out;
}
