// bench:scale's per-turn writes, measured on the databases themselves: before and after each real
// turn (POST /v1/conversations/:id/messages, offline model) DB's local file and the turn tenant's
// cortex shard file are copied and every row of every table read, and the two snapshots are diffed. The turn counts as over once its
// background work has written the listing row (the last D1 write of a turn), so what the indexer
// writes after answering is counted with it. A row written twice in one turn counts once.
import { api } from "./scale-load.mjs";
import { diffSnapshots, snapshotTables, stackFiles, tenantsIn } from "./scale-files.mjs";

async function listed(base, key, conversationId, seq) {
  for (let tries = 0; tries < 300; tries++) {
    const list = await api(base, key, "GET", "/v1/conversations?limit=100");
    if ((list.data.find((c) => c.id === conversationId)?.messageCount ?? 0) >= seq) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`turn in ${conversationId}: listing row never reached seq ${seq}`);
}

/**
 * Runs `turns` turns round-robin over `tenants` (each in its first imported conversation) and
 * returns each turn's diffs, {db, cortex}, each {[table]: {inserted, updated, deleted}}: DB's file
 * and the file of the cortex shard holding the turn's tenant (a D1 shard database, or before 0.3.0
 * its CortexDO object's), so both layouts' index writes are counted the same way.
 */
export async function measureTurnWrites(base, persistDir, tenants, turns) {
  const { db, shards } = stackFiles(persistDir);
  const shardOf = new Map();
  for (const file of shards) for (const t of tenantsIn(file)) shardOf.set(t, file);
  const snaps = new Map();
  const snapshot = (file) => {
    if (!snaps.has(file)) snaps.set(file, snapshotTables(file));
    return snaps.get(file);
  };
  const diffs = [];
  for (let i = 0; i < turns; i++) {
    const t = tenants[i % tenants.length];
    const shard = shardOf.get(t.tenantId);
    if (!shard) throw new Error(`no cortex shard file holds tenant ${t.tenantId}`);
    const before = { db: snapshot(db), cortex: snapshot(shard) };
    const conversationId = t.conversations[0].id;
    const content = `${t.text.message()} (turn ${i})`;
    const send = () => api(base, t.key, "POST", `/v1/conversations/${conversationId}/messages`, { content });
    // Reading the files can outlast the server's keep-alive: a socket it closed meanwhile fails the
    // next request before it is sent, so that one failure is retried once.
    const turn = await send().catch((err) => {
      if (err?.cause?.code !== "UND_ERR_SOCKET") throw err;
      return send();
    });
    await listed(base, t.key, conversationId, Math.max(...turn.messages.map((m) => m.seq)));
    // The listing reads above write nothing; a beat lets any other waitUntil work land.
    await new Promise((r) => setTimeout(r, 250));
    snaps.clear();
    diffs.push({ db: diffSnapshots(before.db, snapshot(db)), cortex: diffSnapshots(before.cortex, snapshot(shard)) });
  }
  return diffs;
}

/** Per-turn figures: rows written (inserted + updated + deleted) per turn, and by table and kind. */
export function summarizeTurnWrites(diffs) {
  const perTurn = diffs.map((d) => Object.values(d).reduce((n, c) => n + c.inserted + c.updated + c.deleted, 0));
  const byTable = {};
  for (const d of diffs) {
    for (const [table, c] of Object.entries(d)) {
      const sum = (byTable[table] ??= { inserted: 0, updated: 0, deleted: 0 });
      sum.inserted += c.inserted;
      sum.updated += c.updated;
      sum.deleted += c.deleted;
    }
  }
  return {
    turns: diffs.length,
    perTurn,
    mean: perTurn.reduce((a, b) => a + b, 0) / Math.max(1, perTurn.length),
    max: Math.max(0, ...perTurn),
    byTable,
  };
}
