#!/usr/bin/env node
// Moves the D1 cortex (cortex_docs) into the tenants' cortex shards by walking
// POST /v1/admin/cortex/migrate until it answers `next: null`. Safe to stop and run again: each
// call is bounded, rows keep their doc ids, and `--cursor` resumes where a run stopped.
// Run it until it reports "done". The route and this script go away in version 0.2.0 (with the D1
// tables they read), so every deployment finishes the move on a 0.1.x release first
// (docs/api-notes.md, "Moving the cortex into its shards").
//
//   CHAT_URL=https://<worker> ADMIN_TOKEN=... node scripts/migrate-cortex.mjs [--limit 200] [--cursor N]
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
  const res = await fetch(`${base}/v1/admin/cortex/migrate`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ limit, ...(cursor ? { cursor } : {}) }),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok || !body) {
    console.error(`migrate: ${res.status} ${JSON.stringify(body)}; resume with --cursor ${cursor ?? 0}`);
    process.exit(1);
  }
  scanned += body.scanned;
  moved += body.moved;
  cursor = body.next;
  console.log(`scanned ${scanned}, moved ${moved}${cursor ? `, next cursor ${cursor}` : ", done"}`);
} while (cursor);
console.log(
  "done: every row of the D1 cortex is in its shard; the deployment may upgrade to 0.2.0, which removes this move",
);
