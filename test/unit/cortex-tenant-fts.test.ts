// A cortex shard keeps each tenant's rows in one rowid range (d1-migrations/cortex-shard/
// 0003_tenant_fts.sql), and the search limits every FTS5 scan to the tenant's range, so FTS5
// matches, and bm25 scores, only the tenant's rows instead of every tenant's in the shard; the
// index is unchanged, so the ranking is too. Checked on node:sqlite with the shard's own migration
// files and the shipped functions: rows land in their tenant's range whoever writes them; the
// ranking statement scores only the tenant's rows; 0003 renumbers and reindexes an existing shard.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { d1Over } from "../../scripts/bench/sqlite-d1.mjs";
import { searchCortexPage, type ShardDatabase, upsertDocs } from "../../services/cortex/search-index";
import { note } from "../cortex-docs";

const DIR = join(import.meta.dirname, "..", "..", "d1-migrations", "cortex-shard");
const migrations = readdirSync(DIR)
  .filter((f) => f.endsWith(".sql"))
  .sort();

/** A shard migrated with the files `pick` keeps, in order. */
function shard(pick: (file: string) => boolean = () => true): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  for (const f of migrations.filter(pick)) db.exec(readFileSync(join(DIR, f), "utf8"));
  return db;
}

const TENANTS = ["ten_a", "ten-a", "ten_a_b", "TEN_A", "a"];

const BODIES = ["The harbour lantern was lit.", "A kettle by the harbour, and an orchard.", "Nothing about the sea."];

/** Three notes per tenant, written interleaved (tenant by tenant, round by round), as a shard gets them. */
async function fill(db: ShardDatabase) {
  for (const [j, body] of BODIES.entries())
    await upsertDocs(
      db,
      TENANTS.map((t, i) => note(t, `n${i}-${j + 1}`, body)),
    );
}

const rowidsOf = (db: DatabaseSync, tenantId: string) =>
  (
    db.prepare(`SELECT rowid FROM cortex_docs WHERE tenant_id = ? ORDER BY rowid`).all(tenantId) as {
      rowid: number;
    }[]
  ).map((r) => r.rowid);

/** Each tenant's rows lie in its range, and the index is consistent with the rows. */
function expectPlaced(db: DatabaseSync) {
  const outside = db
    .prepare(
      `SELECT count(*) AS n FROM cortex_docs d LEFT JOIN cortex_tenant_ranges r ON r.tenant_id = d.tenant_id
       WHERE r.base IS NULL OR d.rowid NOT BETWEEN r.base AND r.base + 4294967295`,
    )
    .get() as { n: number };
  expect(outside.n).toBe(0);
  db.exec(`INSERT INTO cortex_fts(cortex_fts) VALUES ('integrity-check')`);
}

describe("the cortex's tenant rowid ranges", () => {
  it("puts every row in its tenant's range, whoever writes it, and keeps the index consistent", async () => {
    const db = shard();
    await fill(d1Over(db));
    expectPlaced(db);
    const bases = db.prepare(`SELECT base FROM cortex_tenant_ranges ORDER BY base`).all() as { base: number }[];
    expect(bases).toHaveLength(TENANTS.length);
    // A plain INSERT (no rowid) of a known and of a new tenant, an upsert, an update and a delete.
    db.prepare(
      `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES ('x1', 'ten_a', 'memory', 'x1', '2026', 'harbour again')`,
    ).run();
    db.prepare(
      `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES ('x2', 'newcomer', 'memory', 'x2', '2026', 'harbour too')`,
    ).run();
    await upsertDocs(d1Over(db), [note("ten_a", "n0-1", "A different lantern entirely.")]);
    db.prepare(`DELETE FROM cortex_docs WHERE tenant_id = ? AND ref_id = ?`).run("ten-a", "n1-2");
    expectPlaced(db);
    const { hits } = await searchCortexPage(d1Over(db), "ten_a", { q: "harbour lantern", limit: 10 });
    expect(hits.map((h) => h.id).sort()).toEqual(["n0-1", "n0-2", "x1"]);
    expect((await searchCortexPage(d1Over(db), "newcomer", { q: "harbour", limit: 10 })).hits.map((h) => h.id)).toEqual(
      ["x2"],
    );
  });

  it("scores only the tenant's rows in the ranking statement", async () => {
    const db = shard();
    await fill(d1Over(db));
    // Every FTS5 row the ranking statement computes bm25 for is recorded, through a function added
    // to that statement's score.
    const scored = new Set<number>();
    db.function("scored", (rowid) => {
      scored.add(Number(rowid));
      return 0;
    });
    const face = d1Over(db);
    let rankings = 0;
    const recording: ShardDatabase = {
      batch: face.batch,
      prepare: (sql: string) => {
        if (!sql.includes("bm25(cortex_fts)")) return face.prepare(sql);
        rankings++;
        return face.prepare(sql.replace("bm25(cortex_fts)", "(bm25(cortex_fts) + scored(cortex_fts.rowid))"));
      },
    };
    const { hits } = await searchCortexPage(recording, "ten_a", { q: "harbour kettle lantern", limit: 10 });
    expect(hits.map((h) => h.id).sort()).toEqual(["n0-1", "n0-2"]);
    expect(rankings).toBeGreaterThan(0);
    expect([...scored].sort((x, y) => x - y)).toEqual(rowidsOf(db, "ten_a").slice(0, 2));
  });

  it("0003 places and indexes the rows a shard held before it: they are found after it", async () => {
    const db = shard((f) => f < "0003");
    // Written as before 0003: plain inserts, rowids in arrival order, tenants interleaved.
    const insert = db.prepare(
      `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES (?, ?, 'memory', ?, '2026', ?)`,
    );
    for (const [j, body] of BODIES.entries())
      TENANTS.forEach((t, i) => insert.run(`memory:${t}:n${i}-${j + 1}`, t, `n${i}-${j + 1}`, body));
    const before = db.prepare(`SELECT doc_id, tenant_id, body FROM cortex_docs ORDER BY doc_id`).all();
    db.exec(readFileSync(join(DIR, "0003_tenant_fts.sql"), "utf8"));
    // Then the files after it, as a shard gets them, so the shipped functions below find their schema.
    for (const f of migrations.filter((f) => f > "0003_tenant_fts.sql")) db.exec(readFileSync(join(DIR, f), "utf8"));
    expect(db.prepare(`SELECT doc_id, tenant_id, body FROM cortex_docs ORDER BY doc_id`).all()).toEqual(before);
    expectPlaced(db);
    const { hits } = await searchCortexPage(d1Over(db), "ten-a", { q: "orchard kettle", limit: 10 });
    expect(hits.map((h) => h.id)).toEqual(["n1-2"]);
    expect(hits[0].snippet).toMatch(/\[kettle\]/);
    // Written after it, a row of an old tenant joins its range.
    await upsertDocs(d1Over(db), [note("ten-a", "later", "kettle")]);
    expectPlaced(db);
  });
});
