// A cortex shard indexes each row's body and its CJK terms (d1-migrations/cortex-shard/
// 0004_cjk_terms.sql): the character bigrams of every run of Han, kana or Hangul, which unicode61
// would otherwise keep as one token. Checked on node:sqlite with the shard's own migration files and
// the shipped functions: a fresh shard and one upgraded from 0003 both find a word inside a run,
// rows indexed before 0004 still delete and update cleanly (their index entries were the body
// alone, and the triggers delete exactly what was inserted), and a moved row gains its terms.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { d1Over } from "../../scripts/bench/sqlite-d1.mjs";
import { readRows, writeRows } from "../../services/cortex/rows";
import { cjkTerms, searchCortexPage, toFtsQuery, upsertDocs } from "../../services/cortex/search-index";
import { note } from "../cortex-docs";

const DIR = join(import.meta.dirname, "..", "..", "d1-migrations", "cortex-shard");
const migrations = readdirSync(DIR)
  .filter((f) => f.endsWith(".sql"))
  .sort();

function shard(pick: (file: string) => boolean = () => true): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  for (const f of migrations.filter(pick)) db.exec(readFileSync(join(DIR, f), "utf8"));
  return db;
}

const ids = async (db: DatabaseSync, q: string, tenantId = "t") =>
  (await searchCortexPage(d1Over(db), tenantId, { q, limit: 10 })).hits.map((h) => h.id).sort();

/** FTS5's own check that the index holds exactly what the rows' bodies make: true once no row has terms. */
const consistent = (db: DatabaseSync) => db.exec(`INSERT INTO cortex_fts(cortex_fts) VALUES ('integrity-check')`);

describe("cjkTerms", () => {
  /** `terms` as cjkTerms writes them: each space-separated term marked with U+E002. */
  const marked = (terms: string) => terms.replace(/(^| )/g, "$1\uE002");

  it("gives each run's overlapping bigrams and its last character, each marked, null without a run", () => {
    expect(cjkTerms("私は東京タワーに行きました")).toBe(
      marked("私は は東 東京 京タ タワ ワー ーに に行 行き きま まし した た"),
    );
    expect(cjkTerms("我昨天在北京吃了烤鸭")).toBe(marked("我昨 昨天 天在 在北 北京 京吃 吃了 了烤 烤鸭 鸭"));
    expect(cjkTerms("Tokyo 東京 and 北, 서울에서")).toBe(marked("東京 京 北 서울 울에 에서 서"));
    expect(cjkTerms("𠮷野家")).toBe(marked("𠮷野 野家 家"));
    expect(cjkTerms("The harbour lantern.")).toBeNull();
  });

  it("makes a query word with a run a choice of the word and its phrase over the terms", () => {
    const m = marked;
    expect(toFtsQuery("東京タワー harbour", "or")).toBe(`("東京タワー" OR "${m("東京 京タ タワ ワー")}") OR "harbour"`);
    expect(toFtsQuery("北京 東")).toBe(`("北京" OR "${m("北京")}") AND ("東" OR "${m("東")}"*)`);
    expect(toFtsQuery("東京タワー harbour")).toBe(`("東京タワー" OR "${m("東京 京タ タワ ワー")}") AND "harbour"`);
    // Several runs: the first ends a run (its last character follows), the last starts one.
    expect(toFtsQuery("東京-タワー")).toBe(`("東京-タワー" OR "${m("東京 京 タワ ワー")}")`);
    expect(toFtsQuery("東京-猫")).toBe(`("東京-猫" OR "${m("東京 京 猫")}"*)`);
  });
});

describe("the cortex's CJK terms", () => {
  it("finds a one-character word anywhere in a run, the run's last character too", async () => {
    const db = shard();
    await upsertDocs(d1Over(db), [
      note("t", "zh", "我的猫很可爱 quokka"),
      note("t", "zh-end", "这是我的猫"),
      note("t", "ja", "猫が好きです"),
      note("t", "book", "我有一本书。"),
    ]);
    expect(await ids(db, "猫")).toEqual(["ja", "zh", "zh-end"]);
    expect(await ids(db, "书")).toEqual(["book"]);
    expect(await ids(db, "我的")).toEqual(["zh", "zh-end"]);
    expect(await ids(db, "可爱")).toEqual(["zh"]);
    expect(await ids(db, "狗")).toEqual([]);
  });

  it("never matches a word across two runs, nor across the body's end and the terms", async () => {
    const db = shard();
    await upsertDocs(d1Over(db), [
      note("t", "apart", "上海 and 海关"),
      note("t", "punct", "上海、海关"),
      note("t", "edge", "海关 then 上海"),
      note("t", "whole", "他在上海关门了"),
    ]);
    expect(await ids(db, "上海关")).toEqual(["whole"]);
    expect(await ids(db, "上海")).toEqual(["apart", "edge", "punct", "whole"]);
  });

  it("finds a word of several runs as consecutive runs, the first ending one and the last starting one", async () => {
    const db = shard();
    await upsertDocs(d1Over(db), [
      note("t", "tower", "私は東京-タワーに行きました"),
      note("t", "one", "南北-京都"),
      note("t", "inner", "北京-都"),
    ]);
    expect(await ids(db, "東京-タワー")).toEqual(["tower"]);
    expect(await ids(db, "北-京")).toEqual(["one"]);
  });

  it("finds a word inside a run on a fresh shard, and deletes what it indexed", async () => {
    const db = shard();
    await upsertDocs(d1Over(db), [
      note("t", "ja", "私は東京タワーに行きました"),
      note("t", "zh", "我昨天在北京吃了烤鸭"),
      note("t", "en", "The harbour lantern was lit."),
    ]);
    expect(await ids(db, "東京タワー")).toEqual(["ja"]);
    expect(await ids(db, "北京")).toEqual(["zh"]);
    expect(await ids(db, "東京 harbour")).toEqual(["en", "ja"]);
    // A new body: the old bigrams leave the index with it.
    await upsertDocs(d1Over(db), [note("t", "zh", "我在上海")]);
    expect(await ids(db, "北京")).toEqual([]);
    expect(await ids(db, "上海")).toEqual(["zh"]);
    db.prepare(`DELETE FROM cortex_docs WHERE terms IS NOT NULL`).run();
    consistent(db);
    expect(await ids(db, "harbour")).toEqual(["en"]);
  });

  it("upgrades a shard from 0003: old rows stay found and delete cleanly, new rows gain terms", async () => {
    const db = shard((f) => f < "0004");
    // Written as before 0004: no terms column.
    const insert = db.prepare(
      `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES (?, 't', 'memory', ?, '2026', ?)`,
    );
    insert.run("memory:old-ja:00000", "old-ja", "私は東京タワーに行きました");
    insert.run("memory:old-en:00000", "old-en", "The harbour lantern was lit.");
    db.exec(readFileSync(join(DIR, "0004_cjk_terms.sql"), "utf8"));
    consistent(db);
    // Indexed before: the whole run is found, a word inside it is not (documented).
    expect(await ids(db, "私は東京タワーに行きました")).toEqual(["old-ja"]);
    expect(await ids(db, "東京タワー")).toEqual([]);
    await upsertDocs(d1Over(db), [note("t", "new-ja", "昨日は東京タワーに登った")]);
    expect(await ids(db, "東京タワー")).toEqual(["new-ja"]);
    expect(await ids(db, "harbour")).toEqual(["old-en"]);
    // An old row written again with a new body is re-indexed with its terms; then every CJK row goes.
    await upsertDocs(d1Over(db), [note("t", "old-ja", "東京タワーは高い")]);
    expect(await ids(db, "東京タワー")).toEqual(["new-ja", "old-ja"]);
    db.prepare(`DELETE FROM cortex_docs WHERE terms IS NOT NULL`).run();
    consistent(db);
    expect(await ids(db, "東京タワー")).toEqual([]);
  });

  it("a moved row gains its terms in the new shard", async () => {
    const from = shard((f) => f < "0004");
    from
      .prepare(
        `INSERT INTO cortex_docs (doc_id, tenant_id, kind, ref_id, created_at, body) VALUES (?, 't', 'memory', ?, '2026', ?)`,
      )
      .run("memory:zh:00000", "zh", "我昨天在北京吃了烤鸭");
    const to = shard();
    await writeRows(d1Over(to), "t", await readRows(d1Over(from), "t", { after: 0, limit: 10 }));
    expect(await ids(to, "北京")).toEqual(["zh"]);
  });
});
