// bench:scale's own parts: the synthetic tenants (deterministic, skewed), the SQLite file
// measurement and the D1 snapshot diff (on real SQLite files), and the shard figures.
import { mkdtempSync, mkdirSync, rmSync, statSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  diffSnapshots,
  measureShard,
  snapshotTables,
  sqliteFiles,
  stackFiles,
  tenantsIn,
} from "../../scripts/bench/scale-files.mjs";
import { summarizeShards } from "../../scripts/bench/scale-shards.mjs";
import { tenantSizes, tenantText } from "../../scripts/bench/scale-text.mjs";
import { cortexShardSchema } from "../../scripts/bench/sqlite-d1.mjs";

const dirs: string[] = [];
const opened: DatabaseSync[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "bench-scale-test-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("synthetic tenants", () => {
  it("spreads 100,000 messages over 1,000 tenants from tens to over ten thousand, adding up exactly", () => {
    const sizes = tenantSizes(1_000, 100_000);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(100_000);
    expect(sizes[0]).toBeGreaterThanOrEqual(10_000);
    expect(sizes.at(-1)).toBeLessThan(100);
    expect(sizes.at(-1)).toBeGreaterThanOrEqual(10);
    expect(sizes.filter((s) => s >= 1_000 && s < 10_000).length).toBeGreaterThan(5);
    expect(sizes.filter((s) => s >= 100 && s < 1_000).length).toBeGreaterThan(50);
    expect([...sizes].sort((a, b) => b - a)).toEqual(sizes);
  });

  it("refuses sizes that cannot hold the minimum per tenant", () => {
    expect(() => tenantSizes(1_000, 5_000)).toThrow(/at least 10000/);
    expect(() => tenantSizes(0, 100)).toThrow(/tenants/);
  });

  it("makes the same text from the same seed and different text from another", () => {
    const a = tenantText(42);
    const b = tenantText(42);
    const c = tenantText(43);
    const first = Array.from({ length: 50 }, () => a.message());
    expect(Array.from({ length: 50 }, () => b.message())).toEqual(first);
    expect(Array.from({ length: 50 }, () => c.message())).not.toEqual(first);
    expect(a.query()).toBe(b.query());
  });

  it("writes Zipf-skewed words with identifiers and amounts among them", () => {
    const text = tenantText(5);
    const words = Array.from({ length: 2_000 }, () => text.message())
      .join(" ")
      .split(" ");
    const counts = new Map<string, number>();
    for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    const ranked = [...counts.values()].sort((x, y) => y - x);
    // The most frequent word is far more frequent than the hundredth: a heavy head, a long tail.
    expect(ranked[0] / ranked[99]).toBeGreaterThan(20);
    expect(words.some((w) => /^(INV|PO|TKT|ACCT|SKU)-\d{5}$/.test(w))).toBe(true);
    expect(words.some((w) => /^\$[\d,]+\.\d\d$/.test(w))).toBe(true);
  });
});

/**
 * A shard file as wrangler dev lays it out, holding `messages` messages (one long one in two
 * chunks), left open with every write still in its WAL, as a running object leaves it.
 */
function fakeShard(
  persist: string,
  name: string,
  tenantId: string,
  messages: number,
): { file: string; db: DatabaseSync } {
  const folder = join(persist, "v3", "do", "context-chat-CortexDO");
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${name}.sqlite`);
  const db = new DatabaseSync(file);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  db.exec(cortexShardSchema()[0]);
  const insert = db.prepare(
    "INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body) VALUES (?, ?, 'conv_1', 'message', ?, ?, 'user', '2026-01-01', ?)",
  );
  for (let i = 0; i < messages; i++)
    insert.run(`m:msg_${i}:00000`, tenantId, `msg_${i}`, i + 1, `word${i % 7} ledger entry ${i} with amount ${i * 3}`);
  insert.run(`m:msg_0:00001`, tenantId, "msg_0", 1, "the second chunk of the first message");
  opened.push(db);
  return { file, db };
}

describe("shard files", () => {
  it("finds the objects' files but not miniflare's metadata.sqlite", () => {
    const persist = tempDir();
    const { file } = fakeShard(persist, "abc", "t1", 3);
    new DatabaseSync(join(persist, "v3", "do", "context-chat-CortexDO", "metadata.sqlite")).close();
    expect(sqliteFiles(persist, "do", "CortexDO")).toEqual([file]);
    expect(sqliteFiles(persist, "do", "ConversationDO")).toEqual([]);
  });

  it("counts a shard's messages, chunk rows, tenants and bytes, reading its WAL too", () => {
    const persist = tempDir();
    const { file } = fakeShard(persist, "abc", "t1", 40);
    expect(statSync(file).size).toBeLessThan(8_192); // the rows are only in the WAL
    const m = measureShard(file);
    expect(m.diskBytes).toBe(statSync(file).size + statSync(`${file}-wal`).size);
    expect(m.tenants).toEqual(["t1"]);
    expect(m.messages).toBe(40);
    expect(m.docs).toBe(41);
    expect(m.ftsRows).toBeGreaterThan(40);
    // The copy is checkpointed: its size is every page the tables and indexes use.
    expect(m.bytes).toBe(Object.values(m.byTable).reduce((a, b) => a + b, 0));
    expect(m.byTable.cortex_docs).toBeGreaterThan(0);
  });

  it("tells the D1 shard layout from the CortexDO one: DB is the D1 file holding tenants, the shards the others with cortex_docs", () => {
    const d1File = (persist: string, name: string, sql: string) => {
      const folder = join(persist, "v3", "d1", "miniflare-D1DatabaseObject");
      mkdirSync(folder, { recursive: true });
      const db = new DatabaseSync(join(folder, `${name}.sqlite`));
      db.exec(sql);
      opened.push(db);
      return join(folder, `${name}.sqlite`);
    };
    const before = tempDir();
    const db = d1File(before, "db", "CREATE TABLE tenants (id TEXT PRIMARY KEY); CREATE TABLE cortex_docs (x);");
    const objects = [fakeShard(before, "a", "t1", 2).file, fakeShard(before, "b", "t2", 3).file];
    expect(stackFiles(before)).toEqual({ db, layout: "CortexDO objects' SQLite files", shards: objects });

    const after = tempDir();
    const db2 = d1File(after, "db", "CREATE TABLE tenants (id TEXT PRIMARY KEY);");
    const shard0 = d1File(after, "s0", cortexShardSchema()[0]);
    const shard1 = d1File(after, "s1", cortexShardSchema()[0]);
    opened
      .at(-1)
      ?.exec(
        "INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES ('a', 't1', 'message', 'm1', '2026', 'x'), ('b', 't2', 'message', 'm2', '2026', 'y')",
      );
    const files = stackFiles(after);
    expect(files.db).toBe(db2);
    expect(files.layout).toBe("D1 cortex shard databases");
    expect([...files.shards].sort()).toEqual([shard0, shard1].sort());
    expect(tenantsIn(shard1).sort()).toEqual(["t1", "t2"]);
    expect(tenantsIn(db2)).toEqual([]);
  });

  it("diffs snapshots into inserted, updated and deleted rows per table", () => {
    const persist = tempDir();
    const folder = join(persist, "v3", "d1", "miniflare-D1DatabaseObject");
    mkdirSync(folder, { recursive: true });
    const file = join(folder, "db.sqlite");
    const db = new DatabaseSync(file);
    db.exec(
      "PRAGMA journal_mode = WAL; CREATE TABLE conversations (id TEXT PRIMARY KEY, message_count INTEGER); CREATE TABLE keys (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;",
    );
    db.exec("INSERT INTO conversations VALUES ('a', 1), ('b', 2); INSERT INTO keys VALUES ('x', '1')");
    const before = snapshotTables(file);
    db.exec(
      "UPDATE conversations SET message_count = 3 WHERE id = 'a'; UPDATE conversations SET message_count = 4 WHERE id = 'a'; DELETE FROM conversations WHERE id = 'b'; INSERT INTO conversations VALUES ('c', 0); INSERT INTO keys VALUES ('y', '2')",
    );
    const after = snapshotTables(file);
    db.close();
    expect(diffSnapshots(before, after)).toEqual({
      conversations: { inserted: 1, updated: 1, deleted: 1 },
      keys: { inserted: 1, updated: 0, deleted: 0 },
    });
    expect(diffSnapshots(after, after)).toEqual({});
  });
});

describe("shard figures", () => {
  it("takes bytes per added message from the slope and projects the cap from it", () => {
    const shard = (messages: number, bytes: number) => ({
      file: "",
      bytes,
      diskBytes: bytes,
      tenants: ["t"],
      docs: messages,
      messages,
      ftsRows: messages,
      byTable: { cortex_docs: bytes / 2 },
    });
    // 50 KB floor + 1,000 bytes a message.
    const s = summarizeShards([
      shard(10, 60_000),
      shard(100, 150_000),
      shard(10_000, 10_050_000),
      { ...shard(0, 8_192), messages: 0 },
    ]);
    expect(s.shards).toBe(3);
    expect(s.marginalBytesPerMessage).toBeCloseTo(1_000, 6);
    expect(s.shardFloorBytes).toBeCloseTo(50_000, 3);
    expect(s.messagesAtCap).toBe(Math.floor((10e9 - 50_000) / 1_000));
    expect(s.bytesPerMessage).toBeCloseTo(10_260_000 / 10_110, 6);
    expect(s.buckets.map((b) => b.shards)).toEqual([1, 1, 0, 1]);
    expect(s.smallest).toBe(10);
    expect(s.largest).toBe(10_000);
  });
});
