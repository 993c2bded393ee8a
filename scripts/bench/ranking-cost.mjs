// bench:ranking-cost — what one search costs inside a large shard, in-process: the shipped ranking
// (services/cortex/search-index.ts searchCortexPage, bundled as it ships, over node:sqlite through the benches' D1-shaped
// adapter, scripts/bench/sqlite-d1.mjs, with the shard schema of d1-migrations/cortex-shard/) against the single FTS5 query it replaced (kept here verbatim: bm25 of
// the OR query, snippets in the same statement), side by side on the same index in one run. The
// shard: the first questions' LongMemEval turns as one tenant's messages (~12,000 by default).
// Beside them, the same shipped ranking for the same tenant in a shared D1 shard: a second database
// holding its messages and other tenants' (generated text, scale-text.mjs), as the D1 layout puts
// many tenants in one shard where a CortexDO held one.
//   RECALL_DATA_DIR  LongMemEval (required; scripts/bench/realmem-as-longmemeval.mjs writes RealMem in its layout)
//   --questions N    haystacks loaded into the shard (default 25); the first 40 questions are asked, twice
//   --others N       other tenants' messages in the shared shard (default 40,000, in 40 tenants)
//   --shipped-only   leave out the replaced query (seconds a search on long messages), time only the shipped ranking
import { DatabaseSync } from "node:sqlite";
import { importTypeScript, quantile } from "./common.mjs";
import { d1Over, migrateShard } from "./sqlite-d1.mjs";
import { loadLongMemEval, recallDataDir } from "./longmemeval.mjs";
import { tenantText } from "./scale-text.mjs";

const BEFORE = `SELECT d.kind AS kind, d.ref_id AS id, snippet(cortex_fts, 0, '[', ']', '…', 24) AS snippet,
  bm25(cortex_fts) * (CASE WHEN d.kind = 'message' AND d.role = 'assistant' THEN ? ELSE 1 END) AS score
  FROM cortex_fts JOIN cortex_docs d ON d.rowid = cortex_fts.rowid
  WHERE cortex_fts MATCH ? AND d.tenant_id = ? ORDER BY score, d.doc_id LIMIT ?`;

const texts = new Map();
/** The next message of generated tenant `k` (its own vocabulary, scale-text.mjs). */
function otherText(k) {
  if (!texts.has(k)) texts.set(k, tenantText(500 + k));
  return texts.get(k).message();
}

export async function benchRankingCost() {
  const dir = recallDataDir("bench:ranking-cost");
  const flag = process.argv.indexOf("--questions");
  const loaded = Number(flag >= 0 ? process.argv[flag + 1] : 25);
  const othersFlag = process.argv.indexOf("--others");
  const others = Number(othersFlag >= 0 ? process.argv[othersFlag + 1] : 40_000);
  const cortex = await importTypeScript("services/cortex/search-index.ts");
  const { assistantWeight } = await importTypeScript("core/speaker-weight.ts");
  const db = migrateShard(new DatabaseSync(":memory:"));
  const shared = migrateShard(new DatabaseSync(":memory:"));
  const questions = loadLongMemEval(dir, Math.max(40, loaded));
  const insert = db.prepare(
    `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body) VALUES (?, 't', 'c', 'message', ?, ?, ?, '2026-01-01', ?)`,
  );
  const insertShared = shared.prepare(
    `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body) VALUES (?, ?, 'c', 'message', ?, ?, ?, '2026-01-01', ?)`,
  );
  // The others first, as older tenants of the shard: the tenant's rows come after theirs.
  shared.exec("BEGIN");
  for (let k = 0; k < others; k++) {
    const tenant = `o${k % 40}`;
    insertShared.run(`message:o${k}:00000`, tenant, `o${k}`, k, k % 2 ? "assistant" : "user", otherText(k % 40));
  }
  let n = 0;
  db.exec("BEGIN");
  for (const q of questions.slice(0, loaded))
    for (const t of q.turns)
      if (t.text.trim()) {
        n++;
        const body = t.text.slice(0, cortex.INDEX_CHUNK_CHARS);
        insert.run(`message:m${n}:00000`, `m${n}`, n, t.role, body);
        insertShared.run(`message:m${n}:00000`, "t", `m${n}`, n, t.role, body);
      }
  db.exec("COMMIT");
  shared.exec("COMMIT");
  const asked = questions.slice(0, 40).map((q) => q.question);
  console.log(
    `one shard of ${n.toLocaleString("en-US")} messages (LongMemEval, ${loaded} haystacks); ${asked.length} questions, 2 rounds each, limit 10; the shared shard adds ${others.toLocaleString("en-US")} other tenants' messages`,
  );
  const d1 = d1Over(db);
  const d1Shared = d1Over(shared);
  const same = { asked: 0, same: 0 };
  const shippedOnly = process.argv.includes("--shipped-only");
  const runs = {
    "before: one FTS5 query, bm25 of the OR query, snippets in it": (q) => {
      const match = cortex.toFtsQuery(q, "or");
      if (match) db.prepare(BEFORE).all(assistantWeight(q), match, "t", 33);
    },
    "shipped: searchCortexPage (per-word, weighted; snippets of the page)": (q) =>
      cortex.searchCortexPage(d1, "t", { q, limit: 10 }),
    "shipped, the tenant in a shared shard (D1 layout)": (q) =>
      cortex.searchCortexPage(d1Shared, "t", { q, limit: 10 }),
  };
  if (shippedOnly) delete runs["before: one FTS5 query, bm25 of the OR query, snippets in it"];
  for (const q of asked) {
    const ids = async (d) => (await cortex.searchCortexPage(d, "t", { q, limit: 10 })).hits.map((h) => h.id).join();
    same.asked++;
    if ((await ids(d1)) === (await ids(d1Shared))) same.same++;
  }
  const times = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let round = 0; round < 2; round++)
    for (const q of asked)
      for (const [name, run] of Object.entries(runs)) {
        const started = performance.now();
        await run(q);
        times[name].push(performance.now() - started);
      }
  for (const [name, ts] of Object.entries(times))
    console.log(`  ${name.padEnd(70)} p50 ${quantile(ts, 0.5).toFixed(1)} ms, p99 ${quantile(ts, 0.99).toFixed(1)} ms`);
  const [b, s, sh] = Object.values(times).map((ts) => quantile(ts, 0.5));
  console.log(
    shippedOnly
      ? `  p50 ratio, shared shard / own: ${(s / b).toFixed(2)}`
      : `  p50 ratio, before / shipped: ${(b / s).toFixed(1)}; shared shard / own: ${(sh / s).toFixed(2)}`,
  );
  console.log(
    `  the same top 10 (ids and order) in the own and the shared shard: ${same.same} of ${same.asked} questions`,
  );
}
