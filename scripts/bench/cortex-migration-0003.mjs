// What d1-migrations/cortex-shard/0003_tenant_fts.sql costs on an existing shard, in-process
// (node scripts/bench/cortex-migration-0003.mjs [rows...]): a shard migrated up to 0002 is filled
// with generated messages of 20 tenants (scripts/bench/scale-text.mjs) through the shipped
// upsertDocs over node:sqlite (scripts/bench/sqlite-d1.mjs), then 0003 is applied as one exec,
// as D1 runs a migration. Also the writes' cost before and after it (the insert trigger places
// each row in its tenant's rowid range).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ROOT } from "../stack.mjs";
import { importTypeScript } from "./common.mjs";
import { tenantText } from "./scale-text.mjs";
import { d1Over } from "./sqlite-d1.mjs";

const cortex = await importTypeScript("services/cortex/search-index.ts");
const DIR = join(ROOT, "d1-migrations", "cortex-shard");
const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".sql"))
  .sort();
const apply = (db, pick) => {
  for (const f of files.filter(pick)) db.exec(readFileSync(join(DIR, f), "utf8"));
};
const TENANTS = 20;
/**
 * Writes `rows` messages in batches of 50 of one tenant each (as a turn writes one tenant's rows), the
 * tenants in turn; returns ms per 1,000.
 * Before 0003 with the upsert the cortex used then (no rowid: arrival order; the row's parameters
 * from the shipped docParams, the whole body as chunk 0), after it with the shipped upsertDocs,
 * which cannot stand in for the old one: it needs 0003's cortex_tenant_ranges.
 */
const OLD_UPSERT = `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(doc_id) DO UPDATE SET body = excluded.body WHERE cortex_docs.body != excluded.body`;
const oldUpsert = (d1) => ({
  upsertDocs: (_, docs) => d1.batch(docs.map((d) => d1.prepare(OLD_UPSERT).bind(...cortex.docParams(d, 0, d.body)))),
});
const fill = async (db, rows, { from = 0, before = false } = {}) => {
  const texts = Array.from({ length: TENANTS }, (_, k) => tenantText(100 + k));
  const d1 = d1Over(db);
  const writer = before ? oldUpsert(d1) : cortex;
  const started = performance.now();
  for (let i = from; i < from + rows; i += 50) {
    const docs = [];
    for (let j = i; j < Math.min(i + 50, from + rows); j++) {
      const tenant = `ten_${Math.floor(j / 50) % TENANTS}`;
      docs.push({
        tenantId: tenant,
        kind: "message",
        refId: `m${j}`,
        conversationId: "c",
        seq: j,
        role: "user",
        createdAt: "2026-01-01",
        body: texts[Math.floor(j / 50) % TENANTS].message(),
      });
    }
    await writer.upsertDocs(d1, docs);
  }
  return ((performance.now() - started) / rows) * 1000;
};
const sizes = process.argv.slice(2).map(Number);
for (const rows of sizes.length ? sizes : [20000, 100000]) {
  const db = new DatabaseSync(":memory:");
  apply(db, (f) => f < "0003");
  await fill(db, rows, { before: true });
  const sql = readFileSync(join(DIR, "0003_tenant_fts.sql"), "utf8");
  const started = performance.now();
  db.exec(sql);
  const migrate = performance.now() - started;
  console.log(
    `shard of ${rows.toLocaleString("en-US")} rows (${TENANTS} tenants): 0003 in ${(migrate / 1000).toFixed(2)} s`,
  );
}
// Writes: 10,000 rows into a shard before 0003 (the upsert of then) and one after it (upsertDocs),
// alternately, 1,000 at a time.
const before = new DatabaseSync(":memory:");
apply(before, (f) => f < "0003");
const after = new DatabaseSync(":memory:");
apply(after, () => true);
const ms = { before: [], after: [] };
for (let k = 0; k < 10; k++) {
  ms.before.push(await fill(before, 1000, { from: k * 1000, before: true }));
  ms.after.push(await fill(after, 1000, { from: k * 1000 }));
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `writes, 10,000 rows in batches of 50: ${mean(ms.before).toFixed(0)} ms per 1,000 before 0003, ${mean(ms.after).toFixed(0)} ms after`,
);
