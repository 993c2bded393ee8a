// What sharing a D1 shard costs a search, in-process (node scripts/bench/cortex-shared-shard.mjs): the shipped
// searchCortexPage over node:sqlite (scripts/bench/sqlite-d1.mjs), one tenant alone in its database (as in the old
// per-tenant Durable Object) against the same tenant in a shard holding 20,000 other tenants' messages (as in D1).
// The two are queried alternately, query by query, so both see the same machine load.
//   node scripts/bench/cortex-shared-shard.mjs [sizes...]   the tenant's messages (default 100 1000 10000)
import { DatabaseSync } from "node:sqlite";
import { importTypeScript, quantile } from "./common.mjs";
import { d1Over, insertTenantMessages, migrateShard } from "./sqlite-d1.mjs";
const cortex = await importTypeScript("services/cortex/search-index.ts");
const SIZES = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [100, 1000, 10000];
const OTHERS = 20000; // other tenants' messages in the shared shard
const fill = (db, tenant, n, seed) => insertTenantMessages(db, { tenant, n, seed });
for (const size of SIZES) {
  const own = migrateShard(new DatabaseSync(":memory:"));
  const shared = migrateShard(new DatabaseSync(":memory:"));
  const t = fill(own, "t", size, 7);
  fill(shared, "t", size, 7);
  for (let k = 0; k < 20; k++) fill(shared, `o${k}`, OTHERS / 20, 100 + k);
  const qs = Array.from({ length: 60 }, () => t.query());
  const dbs = { "own database": d1Over(own), "shared shard": d1Over(shared) };
  const times = { "own database": [], "shared shard": [] };
  for (let r = 0; r < 2; r++)
    for (const q of qs)
      for (const [name, d1] of Object.entries(dbs)) {
        const s = performance.now();
        await cortex.searchCortexPage(d1, "t", { q, limit: 10 });
        times[name].push(performance.now() - s);
      }
  const out = Object.fromEntries(
    Object.entries(times).map(([name, ts]) => [
      name,
      `p50 ${quantile(ts, 0.5).toFixed(2)} ms, p99 ${quantile(ts, 0.99).toFixed(2)} ms`,
    ]),
  );
  console.log(
    `tenant of ${size} messages: own database ${out["own database"]}; shared shard (+${OTHERS} others' messages) ${out["shared shard"]}`,
  );
}
