// The ranking statement (services/cortex/search-index.ts rankingStatement), checked on node:sqlite
// with the shard's own migration files and the shipped functions:
// - a text longer than INDEX_CHUNK_CHARS is indexed as several rows (chunks) of one document; the
//   statement scores chunks and collapses each document to its best-scoring chunk, so a search
//   answers a long document once, and a paged walk neither repeats nor skips documents;
// - a question of more than MAX_QUERY_WORDS words is searched by its rarest words only; words the
//   tenant never wrote take no place and move no score;
// - a word in more than COMMON_WORD_SHARE of the tenant's rows and more than COMMON_WORD_ROWS of
//   them is not scored, unless it is the question's rarest;
// - a message among the first CONVERSATION_POOL hits is lifted by CONVERSATION_LIFT of its
//   conversation's best other hit: the same texts rank differently only by how they are grouped
//   into conversations, never reorder within one, and a paged walk is still the whole ranking;
// - equal scores put the newer document first.
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { d1Over, migrateShard } from "../../scripts/bench/sqlite-d1.mjs";
import {
  type CortexDoc,
  INDEX_CHUNK_CHARS,
  type SearchHit,
  searchCortexPage,
  upsertDocs,
} from "../../services/cortex/search-index";
import {
  COMMON_WORD_ROWS,
  COMMON_WORD_SHARE,
  CONVERSATION_LIFT,
  CONVERSATION_POOL,
  MAX_QUERY_WORDS,
} from "../../services/cortex/term-stats";
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
    // About 2–3 s alone (long documents of many chunks, paged); the suite runs it beside the other projects.
  }, 30_000);
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

/** A person's message `ref` of `tenantId` in conversation `conversationId`. */
const message = (tenantId: string, conversationId: string, ref: string, body: string, seq = 1): CortexDoc => ({
  tenantId,
  kind: "message",
  refId: `${tenantId}-${ref}`,
  conversationId,
  seq,
  role: "user",
  createdAt: "2026-01-01T00:00:00.000Z",
  body,
});

/** Messages without the searched word, so it stays a rare word of the tenant's. */
const filler = (tenantId: string, n: number) =>
  Array.from({ length: n }, (_, i) => message(tenantId, `filler-${i}`, `filler-${i}`, `lunch plans for day ${i}`));

describe("the conversation lift", () => {
  const texts = {
    a1: "we saw a walrus at the zoo",
    a2: "the walrus had huge tusks and a sleepy grin",
    b1: "a walrus at the zoo",
  };

  it(`moves hits that share a conversation past a lone hit that scores better (${CONVERSATION_LIFT} of the other's score)`, async () => {
    const { db } = shard();
    // The same three texts for two tenants; only the grouping differs. Grouped: a1 and a2 share a
    // conversation. Apart: every text alone in its own, so nothing is lifted.
    await upsertDocs(db, [
      message("grouped", "c1", "a1", texts.a1),
      message("grouped", "c1", "a2", texts.a2, 2),
      message("grouped", "c2", "b1", texts.b1),
      message("apart", "c1", "a1", texts.a1),
      message("apart", "c3", "a2", texts.a2),
      message("apart", "c2", "b1", texts.b1),
      ...filler("grouped", 20),
      ...filler("apart", 20),
    ]);
    const search = async (tenant: string) => {
      const { hits } = await searchCortexPage(db, tenant, { q: "walrus", limit: 10 });
      return hits.map((h) => ({ ref: h.id.slice(tenant.length + 1), score: h.score }));
    };
    const apart = await search("apart");
    const grouped = await search("grouped");
    // Alone, b1 (the same words, shorter) outscores a1.
    expect(apart.map((h) => h.ref)).toEqual(["b1", "a1", "a2"]);
    // Grouped, a1 and a2 borrow from each other and both pass b1, which, alone in its
    // conversation, keeps its score.
    expect(grouped.map((h) => h.ref)).toEqual(["a1", "a2", "b1"]);
    const score = (hits: { ref: string; score: number }[], ref: string) => hits.find((h) => h.ref === ref)?.score ?? 0;
    expect(score(grouped, "b1")).toBeCloseTo(score(apart, "b1"), 9);
    expect(score(grouped, "a1")).toBeCloseTo(score(apart, "a1") + CONVERSATION_LIFT * score(apart, "a2"), 9);
    expect(score(grouped, "a2")).toBeCloseTo(score(apart, "a2") + CONVERSATION_LIFT * score(apart, "a1"), 9);
  });

  it("never reorders the hits of one conversation", async () => {
    const { db } = shard();
    const bodies = Array.from(
      { length: 8 },
      (_, i) => `${"walrus ".repeat(1 + (i % 4))}story ${"and more ".repeat(i)}`,
    );
    await upsertDocs(db, [
      ...bodies.map((b, i) => message("one", "c1", `m${i}`, b, i + 1)),
      ...bodies.map((b, i) => message("each", `c${i}`, `m${i}`, b)),
      ...filler("one", 30),
      ...filler("each", 30),
    ]);
    const order = async (tenant: string, conversationId?: string) =>
      (await searchCortexPage(db, tenant, { q: "walrus", limit: 20, conversationId })).hits.map((h) =>
        h.id.slice(tenant.length + 1),
      );
    const unlifted = await order("each");
    expect(unlifted).toHaveLength(bodies.length);
    expect(await order("one")).toEqual(unlifted);
    expect(await order("one", "c1")).toEqual(unlifted);
  });

  it("leaves a search within one conversation unlifted: its pages keep their places among its messages", async () => {
    const { db } = shard();
    const page = (tenantId: string, conversationId: string, body: string): CortexDoc => ({
      tenantId,
      kind: "page",
      refId: `${tenantId}-att:p000001`,
      conversationId,
      seq: 1,
      role: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      body,
    });
    // One conversation holds both messages and the page; apart, each is alone in its own.
    await upsertDocs(db, [
      message("grouped", "c1", "a1", texts.a1),
      message("grouped", "c1", "a2", texts.a2, 2),
      page("grouped", "c1", texts.b1),
      message("apart", "c1", "a1", texts.a1),
      message("apart", "c2", "a2", texts.a2),
      page("apart", "c3", texts.b1),
      ...filler("grouped", 20),
      ...filler("apart", 20),
    ]);
    const search = async (tenant: string, conversationId?: string) =>
      (await searchCortexPage(db, tenant, { q: "walrus", limit: 10, conversationId })).hits.map((h) => ({
        ref: h.id.slice(tenant.length + 1),
        score: h.score,
      }));
    const apart = await search("apart");
    expect(apart.map((h) => h.ref)).toEqual(["att:p000001", "a1", "a2"]);
    // Within the conversation: the scores and the order of the unlifted ranking.
    const within = await search("grouped", "c1");
    expect(within.map((h) => h.ref)).toEqual(apart.map((h) => h.ref));
    within.forEach((h, i) => expect(h.score).toBeCloseTo(apart[i].score, 9));
    // Across conversations the two messages lift each other past the page.
    expect((await search("grouped")).map((h) => h.ref)).toEqual(["a1", "a2", "att:p000001"]);
  });

  it(`lifts only within its pool of the first ${CONVERSATION_POOL}, and pages through it as one ranking`, async () => {
    const { db } = shard();
    // Text i ranks i-th (one "walrus", longer and longer). Paired: texts i and i + half share a
    // conversation; apart: each alone, the ranking without any lift.
    const half = 40;
    const bodies = Array.from({ length: 2 * half }, (_, i) => `walrus ${"tale ".repeat(i)}`);
    await upsertDocs(db, [
      ...bodies.map((b, i) => message("paired", `c${i % half}`, `m${i}`, b, i)),
      ...bodies.map((b, i) => message("apart", `c${i}`, `m${i}`, b)),
      ...filler("paired", 200),
      ...filler("apart", 200),
    ]);
    const whole = async (tenant: string) => {
      const { hits, next } = await searchCortexPage(db, tenant, { q: "walrus", limit: 200 });
      expect(next).toBeNull();
      return new Map(hits.map((h) => [Number(h.id.slice(tenant.length + 2)), h.score]));
    };
    const plain = await whole("apart");
    expect([...plain.keys()]).toEqual(bodies.map((_, i) => i));
    // Each text is lifted by its partner's score only when both are among the first POOL.
    const pooled = (i: number) => i < CONVERSATION_POOL;
    const partner = (i: number) => (i < half ? i + half : i - half);
    const expected = bodies.map((_, i) => {
      const own = plain.get(i) ?? 0;
      return pooled(i) && pooled(partner(i)) ? own + CONVERSATION_LIFT * (plain.get(partner(i)) ?? 0) : own;
    });
    const lifted = await whole("paired");
    for (const [i, score] of lifted) expect(score).toBeCloseTo(expected[i], 9);
    const scores = [...lifted.values()];
    expect([...scores].sort((a, b) => a - b)).toEqual(scores);
    // Pages of 7 (the first ones read fewer candidates than the pool) walk the same ranking.
    const walked: SearchHit[] = [];
    let cursor: { offset: number } | undefined;
    do {
      const page = await searchCortexPage(db, "paired", { q: "walrus", limit: 7, cursor });
      walked.push(...page.hits);
      cursor = page.next ?? undefined;
    } while (cursor);
    expect(walked.map((h) => Number(h.id.slice("paired".length + 2)))).toEqual([...lifted.keys()]);
    expect(walked.map((h) => h.score)).toEqual(scores);
  });
});

describe("equal scores", () => {
  it("put the newer document first (a repeated question, a regenerate's copy), and page without repeats", async () => {
    const { db } = shard();
    const tenant = "ten_ties";
    // The same text in six conversations, one message each (no lift: each conversation has one hit), days apart.
    const at = (day: number) => `2026-01-${String(day).padStart(2, "0")}T00:00:00.000Z`;
    const same = [3, 1, 6, 2, 5, 4].map((day) => ({
      ...message(tenant, `conv-${day}`, `day-${day}`, "we talked about small talk"),
      createdAt: at(day),
    }));
    await upsertDocs(db, [...same, ...filler(tenant, 20)]);
    const whole = await searchCortexPage(db, tenant, { q: "small talk", limit: 50 });
    expect(new Set(whole.hits.map((h) => h.score)).size).toBe(1);
    expect(whole.hits.map((h) => h.createdAt)).toEqual([6, 5, 4, 3, 2, 1].map(at));
    const walked: SearchHit[] = [];
    let cursor: { offset: number } | undefined;
    do {
      const page = await searchCortexPage(db, tenant, { q: "small talk", limit: 4, cursor });
      walked.push(...page.hits);
      cursor = page.next ?? undefined;
    } while (cursor);
    expect(walked.map((h) => h.id)).toEqual(whole.hits.map((h) => h.id));
  });
});
