// What each part of the ranking statement costs, in-process: the shipped statement (services/cortex/
// search-index.ts rankingStatement, captured from searchCortexPage over node:sqlite, scripts/bench/
// sqlite-d1.mjs) timed as it ships and with one part at a time replaced by a constant, interleaved
// query by query so every form sees the same machine load. A form's result is not a ranking (a
// constant count changes the weights); only its time is read. A replacement that no longer finds
// its part in the statement stops the bench rather than timing the shipped statement twice.
//   node scripts/bench/ranking-parts.mjs [messages] [others]
//     messages  the tenant's messages (default 11,000; generated text, scale-text.mjs)
//     others    other tenants' messages in the same shard (default 0: the tenant alone)
import { DatabaseSync } from "node:sqlite";
import { importTypeScript, quantile } from "./common.mjs";
import { d1Over, insertTenantMessages, migrateShard } from "./sqlite-d1.mjs";

const cortex = await importTypeScript("services/cortex/search-index.ts");
const size = Number(process.argv[2] ?? 11_000);
const others = Number(process.argv[3] ?? 0);
const ROUNDS = 6;

const db = migrateShard(new DatabaseSync(":memory:"));
const fill = (tenant, n, seed) => insertTenantMessages(db, { tenant, n, seed });
const tenant = fill("t", size, 7);
for (let k = 0; k < 20 && others; k++) fill(`o${k}`, Math.round(others / 20), 100 + k);

// The statements a search sends, as sent: searchCortexPage over a D1 face that records each bind.
const face = d1Over(db);
let sent = [];
const recording = {
  ...face,
  prepare(sql) {
    const statement = face.prepare(sql);
    return { ...statement, bind: (...params) => (sent.push({ sql, params }), statement.bind(...params)) };
  },
};
const statements = [];
for (let i = 0; i < 40; i++) {
  sent = [];
  await cortex.searchCortexPage(recording, "t", { q: tenant.query(), limit: 10 });
  statements.push(...sent.filter((s) => s.sql.startsWith("WITH RECURSIVE")));
}

const TENANT_COUNT =
  /\(SELECT count\(\*\) FROM r CROSS JOIN cortex_fts ON cortex_fts MATCH words\.phrase AND cortex_fts\.rowid BETWEEN r\.lo AND r\.hi\)/;
const SHARD_COUNT = /\(SELECT count\(\*\) FROM cortex_fts WHERE cortex_fts MATCH phrase\)/;
const ROWS_COUNT = /SELECT count\(\*\) FROM cortex_docs WHERE tenant_id = \?\d+/;
const RANGE_IN_SCAN =
  / CROSS JOIN r CROSS JOIN cortex_fts ON cortex_fts MATCH w\.phrase AND cortex_fts\.rowid BETWEEN r\.lo AND r\.hi/;
const SNIPPET = /\(SELECT snippet\([\s\S]*?\) AS snippet/;
/** Each form: the parts replaced (pattern, stand-in). */
const FORMS = {
  "as shipped": [],
  "no snippets": [[SNIPPET, "NULL AS snippet"]],
  "snippets in one range scan": (() => {
    let orQuery = "";
    let marks = "";
    return [
      [
        /\(SELECT snippet\(cortex_fts, 0, (\?\d+), (\?\d+), '…', 24\) FROM cortex_fts\s+WHERE cortex_fts MATCH (\?\d+) AND cortex_fts\.rowid = page\.chunk\) AS snippet/,
        (_, open, close, param) => {
          marks = `${open}, ${close}`;
          orQuery = param;
          return "(SELECT snippet FROM snips WHERE snips.chunk = page.chunk) AS snippet";
        },
      ],
      [
        /\n {2}SELECT c\.n AS candidates/,
        () => `,
    snips AS MATERIALIZED (
      SELECT cortex_fts.rowid AS chunk, snippet(cortex_fts, 0, ${marks}, '…', 24) AS snippet
      FROM cortex_fts WHERE cortex_fts MATCH ${orQuery}
        AND cortex_fts.rowid BETWEEN (SELECT min(chunk) FROM page) AND (SELECT max(chunk) FROM page)
        AND cortex_fts.rowid IN (SELECT chunk FROM page)
    )
  SELECT c.n AS candidates`,
      ],
    ];
  })(),
  "no tenant word counts": [[TENANT_COUNT, "1000"]],
  "no whole-shard word counts": [[SHARD_COUNT, "1000"]],
  "no tenant row count": [[ROWS_COUNT, `SELECT ${size}`]],
  "scan without the tenant's range": [[RANGE_IN_SCAN, " CROSS JOIN cortex_fts ON cortex_fts MATCH w.phrase"]],
  "none of the tenant-neutral parts": [
    [TENANT_COUNT, "1000"],
    [ROWS_COUNT, `SELECT ${size}`],
    [RANGE_IN_SCAN, " CROSS JOIN cortex_fts ON cortex_fts MATCH w.phrase"],
  ],
};

/** The statement with the form's parts replaced; a parameter no longer read is kept bound by a CTE no one reads. */
function formOf(sql, parts, name) {
  let out = sql;
  for (const [pattern, standIn] of parts) {
    if (!pattern.test(out)) throw new Error(`ranking-parts: "${name}" no longer finds ${pattern} in the statement`);
    out = out.replace(pattern, standIn);
  }
  const unread = [...new Set(sql.match(/\?\d+/g))].filter((p) => !new RegExp(`\\${p}(?!\\d)`).test(out));
  return unread.length
    ? out.replace(
        "\n  SELECT c.n AS candidates",
        `, unread AS (SELECT ${unread.join(", ")})\n  SELECT c.n AS candidates`,
      )
    : out;
}

const times = Object.fromEntries(Object.keys(FORMS).map((name) => [name, []]));
const prepared = statements.map(({ sql, params }) => ({
  params,
  forms: Object.entries(FORMS).map(([name, parts]) => [name, db.prepare(formOf(sql, parts, name))]),
}));
for (let round = 0; round < ROUNDS; round++)
  for (const { params, forms } of prepared)
    for (const [name, statement] of forms) {
      const start = performance.now();
      statement.all(...params);
      times[name].push(performance.now() - start);
    }

console.log(
  `ranking-parts: a tenant of ${size.toLocaleString("en-US")} messages${others ? ` in a shard with ${others.toLocaleString("en-US")} other tenants' messages` : ", alone in its shard"}; ${statements.length} searches × ${ROUNDS} rounds per form`,
);
const shipped = quantile(times["as shipped"], 0.5);
for (const [name, ts] of Object.entries(times)) {
  const p50 = quantile(ts, 0.5);
  console.log(
    `  ${name.padEnd(34)} p50 ${p50.toFixed(2).padStart(7)} ms  p99 ${quantile(ts, 0.99).toFixed(2).padStart(7)} ms  (${(p50 - shipped).toFixed(2)} ms against as shipped)`,
  );
}
