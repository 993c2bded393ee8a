#!/usr/bin/env node
// Moves one tenant's cortex to another D1 shard by walking
// POST /v1/admin/cortex/tenants/{tenant}/move until it answers `next: null`, waiting where the
// route says to (docs/api-notes.md, "The cortex's D1 shards"). Safe to stop and run again: each
// step is bounded and repeatable, and `--cursor` resumes a copy where a run stopped.
//
//   CHAT_URL=https://<worker> ADMIN_TOKEN=... node scripts/move-cortex-tenant.mjs --tenant <id> --to CORTEX_SHARD_1 [--limit 200] [--cursor N]
//   (defaults: http://127.0.0.1:8787 and the local dev admin token)
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const base = (process.env.CHAT_URL ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const token = process.env.ADMIN_TOKEN ?? "dev-admin-token";
const tenant = flag("tenant");
const to = flag("to");
if (!tenant || !to) {
  console.error("usage: move-cortex-tenant.mjs --tenant <id> --to CORTEX_SHARD_<n> [--limit 200] [--cursor N]");
  process.exit(2);
}
const limit = Number(flag("limit") ?? 200);
let cursor = flag("cursor") ?? null;

do {
  const res = await fetch(`${base}/v1/admin/cortex/tenants/${encodeURIComponent(tenant)}/move`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ to, limit, ...(cursor ? { cursor } : {}) }),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok || !body) {
    console.error(`move: ${res.status} ${JSON.stringify(body)}; resume with --cursor ${cursor ?? 0}`);
    process.exit(1);
  }
  cursor = body.next;
  console.log(`${body.phase}: copied ${body.copied}, removed ${body.removed}${cursor ? `, next ${cursor}` : ""}`);
  if (body.waitSeconds) await new Promise((r) => setTimeout(r, body.waitSeconds * 1000));
} while (cursor);
console.log(`done: ${tenant}'s cortex is in ${to}`);
