// The ranking statement (services/cortex/search-index.ts rankingStatement), checked on node:sqlite
// with the shard's own migration files and the shipped functions:
// - a text longer than INDEX_CHUNK_CHARS is indexed as several rows (chunks) of one document; the
//   statement scores chunks and collapses each document to its best-scoring chunk, so a search
//   answers a long document once, and a paged walk neither repeats nor skips documents;
// - a question of more than MAX_QUERY_WORDS words is searched by its rarest words only; words the
//   tenant never wrote take no place and move no score;
// - a word in more than COMMON_WORD_SHARE of the tenant's rows and more than COMMON_WORD_ROWS of
//   them is not scored, unless it is the question's rarest.
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { d1Over, migrateShard } from "../../scripts/bench/sqlite-d1.mjs";
import { INDEX_CHUNK_CHARS, type SearchHit, searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { COMMON_WORD_ROWS, COMMON_WORD_SHARE, MAX_QUERY_WORDS } from "../../services/cortex/term-stats";
import { note } from "../cortex-docs";

/** A shard with its own migrations applied, raw and in D1's shape. */
function shard() {
  const db = migrateShard(new DatabaseSync(":memory:"));
  return { raw: db, db: d1Over(db) };
}

/** `count` chunks' worth of the word alone: each chunk outscores any short text holding it. */
const dense = (word: string, count: number) => `${word} `.repeat((count * INDEX_CHUNK_CHARS) / (word.length + 1));

/** `count` chunks' worth of text, each chunk naming the word once among filler. */
const long = (word: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${word} part ${i} ${"filler ".repeat(INDEX_CHUNK_CHARS / 8)}`).join(" ");

describe("the cortex's chunked documents", () => {
  it("answer a long document once, with the snippet of its best chunk, and page without repeats", async () => {
    const { raw, db } = shard();
    const tenant = "ten_chunks";
    await upsertDocs(db, [
      note(tenant, "long-1", dense("walrus", 8)),
      note(tenant, "long-2", dense("walrus", 3)),
      note(tenant, "long-3", long("walrus", 4)),
      ...Array.from({ length: 5 }, (_, i) => note(tenant, `short-${i}`, `a walrus story number ${i}`)),
    ]);
    const chunks = raw.prepare(`SELECT ref_id, count(*) AS n FROM cortex_docs GROUP BY ref_id`).all() as {
      ref_id: string;
      n: number;
    }[];
    expect(chunks.find((c) => c.ref_id === "long-1")?.n).toBeGreaterThanOrEqual(8);
    expect(chunks.find((c) => c.ref_id === "long-2")?.n).toBeGreaterThanOrEqual(3);
    expect(chunks.find((c) => c.ref_id === "long-3")?.n).toBeGreaterThan(2);

    const whole = await searchCortexPage(db, tenant, { q: "walrus", limit: 50 });
    expect(whole.hits.map((h) => h.id).sort()).toEqual(
      ["long-1", "long-2", "long-3", ...Array.from({ length: 5 }, (_, i) => `short-${i}`)].sort(),
    );
    expect(whole.next).toBeNull();
    expect(whole.hits.every((h) => h.snippet.includes("[walrus]"))).toBe(true);
    // Ranked by score, best (lowest bm25) first.
    const scores = whole.hits.map((h) => h.score);
    expect([...scores].sort((a, b) => a - b)).toEqual(scores);

    // The best six chunks are all long-1's: the first page of two needs a second, wider pass.
    const first = await searchCortexPage(db, tenant, { q: "walrus", limit: 2 });
    expect(first.hits.map((h) => h.id)).toEqual(["long-1", "long-2"]);

    const walked: SearchHit[] = [];
    let cursor: { offset: number } | undefined;
    do {
      const page = await searchCortexPage(db, tenant, { q: "walrus", limit: 2, cursor });
      expect(page.hits.length).toBeLessThanOrEqual(2);
      walked.push(...page.hits);
      cursor = page.next ?? undefined;
    } while (cursor);
    expect(walked.map((h) => h.id)).toEqual(whole.hits.map((h) => h.id));
  });
});

describe("a long question", () => {
  it(`is searched by its ${MAX_QUERY_WORDS} rarest words the tenant wrote: the everyday word past them finds nothing`, async () => {
    const { db } = shard();
    const tenant = "ten_words";
    // Words each in one note: rarer than "walk", which 31 notes hold.
    const rare = Array.from({ length: MAX_QUERY_WORDS }, (_, i) => `zqxv${i}`);
    await upsertDocs(db, [
      ...Array.from({ length: 30 }, (_, i) => note(tenant, `walk-${i}`, `a walk in the park, day ${i}`)),
      note(tenant, "only-walk", "another walk"),
      ...rare.map((word, i) => note(tenant, `rare-${i}`, `the ${word} note`)),
    ]);
    const short = await searchCortexPage(db, tenant, { q: ["walk", ...rare.slice(1)].join(" "), limit: 60 });
    expect(short.hits.map((h) => h.id)).toContain("only-walk");
    const long = await searchCortexPage(db, tenant, { q: ["walk", ...rare].join(" "), limit: 60 });
    expect(long.hits.map((h) => h.id).sort()).toEqual(rare.map((_, i) => `rare-${i}`).sort());
    // Words the tenant never wrote take no place: the same question padded with them still finds "walk".
    const padded = ["walk", ...rare.slice(1), ...Array.from({ length: 12 }, (_, i) => `qqnever${i}`)].join(" ");
    const withUnknown = await searchCortexPage(db, tenant, { q: padded, limit: 60 });
    expect(withUnknown.hits.map((h) => h.id)).toContain("only-walk");
    // Nor do they move a score: the padded question ranks exactly as the question without them.
    expect(withUnknown.hits).toEqual(short.hits);
  });
});

describe("a tenant's everyday words", () => {
  it(`are not scored past ${COMMON_WORD_SHARE * 100}% and ${COMMON_WORD_ROWS} of its rows, unless the question's rarest`, async () => {
    const { db } = shard();
    const tenant = "ten_everyday";
    const walks = COMMON_WORD_ROWS + 50;
    const harbours = COMMON_WORD_ROWS / 2;
    await upsertDocs(db, [
      ...Array.from({ length: walks }, (_, i) => note(tenant, `walk-${i}`, `a walk in the park, day ${i}`)),
      ...Array.from({ length: harbours }, (_, i) => note(tenant, `harbour-${i}`, `the harbour at dawn, day ${i}`)),
      ...Array.from({ length: 5 }, (_, i) => note(tenant, `rare-${i}`, `the zqxv note ${i}`)),
    ]);
    const rows = walks + harbours + 5;
    // "walk" is everyday (over both bounds); "harbour", in a larger share than COMMON_WORD_SHARE,
    // is under COMMON_WORD_ROWS and stays.
    expect(walks).toBeGreaterThan(Math.max(rows * COMMON_WORD_SHARE, COMMON_WORD_ROWS));
    expect(harbours / rows).toBeGreaterThan(COMMON_WORD_SHARE);
    const ids = async (q: string) =>
      (await searchCortexPage(db, tenant, { q, limit: 100 })).hits.map((h) => h.id.replace(/-\d+$/, "")).sort();
    expect(await ids("walk zqxv")).toEqual(Array(5).fill("rare"));
    expect(await ids("walk harbour")).toEqual(Array(harbours).fill("harbour"));
    expect(await ids("harbour zqxv")).toEqual([...Array(harbours).fill("harbour"), ...Array(5).fill("rare")]);
    // Alone, or the rarest of its question, an everyday word is searched.
    expect(await ids("walk")).toEqual(Array(100).fill("walk"));
  });
});
