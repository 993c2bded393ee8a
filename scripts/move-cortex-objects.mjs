#!/usr/bin/env node
// Moves the cortex's Durable Object shards (CortexDO) into the D1 shards by walking
// POST /v1/admin/cortex/move-objects until it answers `next: null`. Safe to stop and run again:
// each call is bounded, rows keep their doc ids, and `--cursor` resumes where a run stopped.
// Run it until it reports "done": the release after this one deletes CortexDO and its storage
// (docs/scale.md, "Leaving the Durable Object shards").
//
//   CHAT_URL=https://<worker> ADMIN_TOKEN=... node scripts/move-cortex-objects.mjs [--limit 200] [--cursor T:N]
//   (defaults: http://127.0.0.1:8787 and the local dev admin token)
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const base = (process.env.CHAT_URL ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const token = process.env.ADMIN_TOKEN ?? "dev-admin-token";
const limit = Number(flag("limit") ?? 200);
let cursor = flag("cursor") ?? null;
let moved = 0;
let scanned = 0;

do {
  const res = await fetch(`${base}/v1/admin/cortex/move-objects`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ limit, ...(cursor ? { cursor } : {}) }),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok || !body) {
    console.error(`move: ${res.status} ${JSON.stringify(body)}; resume with --cursor ${cursor ?? "(none)"}`);
    process.exit(1);
  }
  scanned += body.scanned;
  moved += body.moved;
  cursor = body.next;
  console.log(`scanned ${scanned}, moved ${moved}${cursor ? `, next cursor ${cursor}` : ", done"}`);
} while (cursor);
console.log("done: every Durable Object shard's rows are in the D1 shards; the next release may delete CortexDO");
