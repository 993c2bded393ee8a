// bench:scale's per-turn D1 writes, measured on the database itself: before and after each real
// turn (POST /v1/conversations/:id/messages, offline model) the local D1 file is copied and every
// row of every table read, and the two snapshots are diffed. The turn counts as over once its
// background work has written the listing row (the last D1 write of a turn), so what the indexer
// writes after answering is counted with it. A row written twice in one turn counts once.
import { api } from "./scale-load.mjs";
import { diffSnapshots, snapshotTables, sqliteFiles } from "./scale-files.mjs";

/** The D1 database's file under the stack's persist folder (the stack binds one database). */
export function d1File(persistDir) {
  const files = sqliteFiles(persistDir, "d1", "D1DatabaseObject");
  if (files.length !== 1) throw new Error(`expected one local D1 file under ${persistDir}, found ${files.length}`);
  return files[0];
}

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
 * returns each turn's diff: {[table]: {inserted, updated, deleted}}.
 */
export async function measureTurnWrites(base, persistDir, tenants, turns) {
  const file = d1File(persistDir);
  const diffs = [];
  let before = snapshotTables(file);
  for (let i = 0; i < turns; i++) {
    const t = tenants[i % tenants.length];
    const conversationId = t.conversations[0].id;
    const turn = await api(base, t.key, "POST", `/v1/conversations/${conversationId}/messages`, {
      content: `${t.text.message()} (turn ${i})`,
    });
    await listed(base, t.key, conversationId, Math.max(...turn.messages.map((m) => m.seq)));
    // The listing reads above write nothing; a beat lets any other waitUntil work land.
    await new Promise((r) => setTimeout(r, 250));
    const after = snapshotTables(file);
    diffs.push(diffSnapshots(before, after));
    before = after;
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
