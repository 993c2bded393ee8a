// bench:scale, the cortex part: many tenants of skewed sizes on the real local stack, loaded
// through the public API; then the cortex shards' files measured on disk (the D1 shard databases,
// or in a checkout from before 0.3.0 one CortexDO object per tenant: the same bench reads either),
// searches timed per tenant size, and real turns' writes measured on DB's and the shard's files.
//   BENCH_SCALE_TENANTS   tenants (default 1,000)
//   BENCH_SCALE_MESSAGES  messages across them (default 100,000; Zipf sizes, at least 10 each)
//   BENCH_SCALE_QUERIES   searches per shard size bucket (default 300)
//   BENCH_SCALE_TURNS     turns whose D1 writes are measured (default 20)
//   BENCH_SCALE_SEMANTIC  "local": the stack runs with SEMANTIC_SEARCH=local, so the shards also
//                         hold the semantic path's rows (cortex_embedded, as deployed; and the local
//                         vectors, local_vectors, which Vectorize holds when deployed)
import { cpus, loadavg } from "node:os";
import { quantile, withStack } from "./common.mjs";
import { measureTurnWrites, summarizeTurnWrites } from "./scale-d1.mjs";
import { measureShard, stackFiles } from "./scale-files.mjs";
import { api, createTenants, importHistories, waitIndexed } from "./scale-load.mjs";
import { BUCKETS, SHARD_CAP_BYTES, bucketOf, summarizeShards } from "./scale-shards.mjs";
import { prng, tenantSizes } from "./scale-text.mjs";

function setting(name, fallback) {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: a positive whole number (got ${raw})`);
  return n;
}

const fmt = (n, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** `perBucket` searches in each size bucket, spread over its tenants, each with the tenant's own key. */
async function timeSearches(base, tenants, perBucket) {
  const random = prng(7);
  const rows = [];
  for (const b of BUCKETS) {
    const own = tenants.filter((t) => bucketOf(t.size) === b.name);
    if (!own.length) continue;
    const ms = [];
    let hits = 0;
    for (let i = 0; i < perBucket; i++) {
      const t = own[Math.floor(random() * own.length)];
      const q = t.text.query();
      const started = performance.now();
      const res = await api(base, t.key, "GET", `/v1/search?${new URLSearchParams({ q, limit: "10" })}`);
      ms.push(performance.now() - started);
      hits += res.data.length;
    }
    rows.push({
      bucket: b.name,
      tenants: own.length,
      queries: ms.length,
      p50: quantile(ms, 0.5),
      p99: quantile(ms, 0.99),
      hits: hits / ms.length,
    });
  }
  return rows;
}

/** Tenants whose shards differ in size by orders of magnitude: a turn's D1 writes should not. */
const turnTenants = (tenants) => BUCKETS.map((b) => tenants.find((t) => bucketOf(t.size) === b.name)).filter(Boolean);

const searchRow = (r) =>
  `${r.bucket.padEnd(7)} ${String(r.tenants).padStart(4)} tenants, ${r.queries} queries: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.hits.toFixed(1)} hits/query`;

function report({ tenants, load, layout, shards, searches, writes, loads }) {
  const s = summarizeShards(shards);
  console.log(`\n== bench:scale, cortex ==`);
  console.log(
    `tenants ${fmt(tenants.length)}, messages ${fmt(load.messages)} in ${fmt(load.conversations)} conversations; shard sizes ${fmt(s.smallest)} to ${fmt(s.largest)} messages`,
  );
  console.log(
    `load: imports answered in ${secs(load.importMs)}, all indexed after ${secs(load.indexedMs)}: ${fmt(load.messages / (load.indexedMs / 1000))} messages/s (tenant creation ${secs(load.tenantsMs)} more)`,
  );
  console.log(
    `shards on disk: ${fmt(s.shards)} ${layout} (${s.sharedShards} holding more than one tenant), ${fmt(s.messages)} messages indexed, ${fmt(s.bytes / 1e6, 1)} MB checkpointed (${fmt(s.diskBytes / 1e6, 1)} MB as found, WAL included)`,
  );
  console.log(
    `index rows per message: ${s.docsPerMessage.toFixed(3)} cortex_docs rows (one per chunk), ${s.ftsRowsPerMessage.toFixed(3)} FTS5 shadow rows`,
  );
  console.log(
    `bytes per message: ${fmt(s.bytesPerMessage)} overall; ${fmt(s.marginalBytesPerMessage)} per added message (least squares over the shards), a shard's floor ${fmt(s.shardFloorBytes / 1024, 1)} KiB`,
  );
  for (const b of s.buckets)
    if (b.shards)
      console.log(
        `  shards ${b.name.padEnd(7)} ${String(b.shards).padStart(4)} shards, ${fmt(b.messages).padStart(7)} messages, ${fmt(b.bytesPerMessage)} bytes/message`,
      );
  console.log(
    `  by table (bytes/message): ${Object.entries(s.tableBytesPerMessage)
      .slice(0, 6)
      .map(([t, b]) => `${t} ${fmt(b)}`)
      .join(", ")}`,
  );
  console.log(
    `projected messages per shard at the ${SHARD_CAP_BYTES / 1e9} GB per-object cap: ${fmt(s.messagesAtCap)} (at ${fmt(s.marginalBytesPerMessage)} bytes/message)`,
  );
  console.log(`search (GET /v1/search, each tenant's own key, limit 10), by the tenant's messages:`);
  for (const r of searches) console.log(`  ${searchRow(r)}`);
  if (writes.length)
    for (const [group, label] of [
      ["db", "DB (D1)"],
      ["cortex", `the tenant's cortex shard (${layout})`],
    ]) {
      const w = summarizeTurnWrites(writes.map((d) => d[group]));
      console.log(
        `per-turn writes to ${label} over ${w.turns} real turns (rows inserted/updated/deleted, diffed from the file before and after each turn): mean ${w.mean.toFixed(2)}, max ${w.max}; per turn ${w.perTurn.join(" ")}`,
      );
      for (const [table, c] of Object.entries(w.byTable))
        console.log(
          `  ${table}: ${(c.inserted / w.turns).toFixed(2)} inserted, ${(c.updated / w.turns).toFixed(2)} updated, ${(c.deleted / w.turns).toFixed(2)} deleted per turn`,
        );
    }
  console.log(
    `load average (1 min) during the run, ${cpus().length} cores: min ${Math.min(...loads).toFixed(1)}, mean ${(loads.reduce((a, b) => a + b, 0) / loads.length).toFixed(1)}, max ${Math.max(...loads).toFixed(1)}`,
  );
}

export async function benchScaleCortex() {
  const tenantCount = setting("BENCH_SCALE_TENANTS", 1_000);
  const messageCount = setting("BENCH_SCALE_MESSAGES", 100_000);
  const perBucket = setting("BENCH_SCALE_QUERIES", 300);
  const turns = setting("BENCH_SCALE_TURNS", 20);
  const semantic = process.env.BENCH_SCALE_SEMANTIC ?? "";
  if (semantic !== "" && semantic !== "local")
    throw new Error(`BENCH_SCALE_SEMANTIC: "local" or unset (got ${semantic})`);
  const sizes = tenantSizes(tenantCount, messageCount);
  console.log(
    `bench:scale (cortex): ${fmt(tenantCount)} tenants, ${fmt(messageCount)} messages, largest tenant ${fmt(sizes[0])}, smallest ${fmt(sizes.at(-1))}; semantic path ${semantic || "off"}`,
  );
  const loads = [loadavg()[0]];
  const timer = setInterval(() => loads.push(loadavg()[0]), 5000);
  await withStack(
    async (base, persistDir) => {
      let t0 = Date.now();
      const tenants = await createTenants(base, sizes);
      const tenantsMs = Date.now() - t0;
      console.log(`created ${fmt(tenants.length)} tenants and keys through the admin API in ${secs(tenantsMs)}`);
      t0 = Date.now();
      const loaded = await importHistories(base, tenants);
      const importMs = Date.now() - t0;
      await waitIndexed(base, tenants);
      const load = { ...loaded, tenantsMs, importMs, indexedMs: Date.now() - t0 };
      console.log(`loaded ${fmt(load.messages)} messages in ${secs(load.indexedMs)}; timing searches`);
      const searches = await timeSearches(base, tenants, perBucket);
      for (const r of searches) console.log(`  ${searchRow(r)}`);
      console.log(`measuring the shards' files`);
      const { layout, shards: files } = stackFiles(persistDir);
      const shards = files.map(measureShard).filter((s) => s.docs > 0);
      console.log(`measuring ${turns} turns' writes`);
      // A failed turn (the local stack under load) costs the write figures, not the ones measured above.
      const writes = await measureTurnWrites(base, persistDir, turnTenants(tenants), turns).catch((err) => {
        console.log(`the turns' writes were not measured: ${err.message}`);
        return [];
      });
      report({ tenants, load, layout, shards, searches, writes, loads });
    },
    semantic ? { SEMANTIC_SEARCH: semantic } : {},
  ).finally(() => clearInterval(timer));
}
