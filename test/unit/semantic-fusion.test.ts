// A fused search page (services/semantic/fusion.ts) is a slice of one ranking: the fused head of
// both rankings, then the lexical ranking on alone. Paged at any size, a walk shows every hit of
// the one-page ranking once, in its order.
import { describe, expect, it } from "vitest";
import type { SearchHit, ShardDatabase } from "../../services/cortex/search-index";
import { FUSION_DEPTH, semanticFusion } from "../../services/semantic/fusion";
import type { SemanticPath } from "../../services/semantic/types";

const hit = (id: string): SearchHit => ({
  kind: "memory",
  id,
  conversationId: null,
  messageId: null,
  seq: null,
  role: null,
  from: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  snippet: "",
  score: 0,
});
// Lexical: d0..d119. Semantic: 50 documents the words miss, then d40 (past the head's depth), then more.
const lexical = Array.from({ length: 120 }, (_, i) => `d${i}`);
const semantic = [
  ...Array.from({ length: FUSION_DEPTH }, (_, i) => `s${i}`),
  "d40",
  ...Array.from({ length: 50 }, (_, i) => `s${FUSION_DEPTH + i}`),
];
const path: SemanticPath = {
  mode: "local",
  embedder: { model: "fake", dimensions: 1, embed: async (texts) => texts.map(() => new Float32Array([1])) },
  index: {
    upsert: async () => {},
    delete: async () => {},
    query: async (_tenant, _vector, topK) => semantic.slice(0, topK).map((id, i) => ({ id, score: 1 - i / 1000 })),
  },
};
// The shard: nothing to catch up; each vector id's document is the id itself.
const db = {
  prepare: (sql: string) => ({
    bind: (...params: unknown[]) => ({
      all: async () => ({
        results: sql.includes("FROM cortex_embedded e JOIN cortex_docs d")
          ? params.slice(2).map((id) => ({ ...hit(String(id)), vecId: String(id) }))
          : [],
      }),
      run: async () => ({}),
    }),
  }),
  batch: async () => [],
} as unknown as ShardDatabase;

const page = (offset: number, limit: number, over: SemanticPath = path) =>
  semanticFusion(over).page({
    db,
    tenantId: "t",
    q: "anything",
    offset,
    opts: { limit },
    lexical: async (count) => lexical.slice(0, count).map(hit),
  });

async function walk(limit: number): Promise<string[]> {
  const ids: string[] = [];
  for (let offset: number | null = 0; offset !== null; ) {
    const p = await page(offset, limit);
    ids.push(...p.hits.map((h) => h.id));
    offset = p.next?.offset ?? null;
  }
  return ids;
}

describe("a fused search, paged", () => {
  it("is one ranking at every page size: no hit twice, none skipped", async () => {
    const whole = (await page(0, 500)).hits.map((h) => h.id);
    expect(new Set(whole).size).toBe(whole.length);
    // Every lexical hit is reached, and the semantic head's documents.
    for (const id of [...lexical, ...semantic.slice(0, FUSION_DEPTH)]) expect(whole).toContain(id);
    for (const limit of [7, 20, 50, 100]) expect(await walk(limit)).toEqual(whole);
  });

  it("scores stay in order past the fused head (lower is better)", async () => {
    const scores = (await page(0, 500)).hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
  });

  it("answers with the lexical ranking alone when the embedding service or the vector index fails", async () => {
    const failing = (where: "embed" | "query"): SemanticPath => ({
      ...path,
      embedder: {
        ...path.embedder,
        embed: async (texts) => {
          if (where === "embed") throw new Error("3040: Capacity temporarily exceeded (429)");
          return path.embedder.embed(texts);
        },
      },
      index: {
        ...path.index,
        query: async () => {
          throw new Error("vector index unavailable");
        },
      },
    });
    for (const where of ["embed", "query"] as const)
      for (const [offset, limit] of [
        [0, 10],
        [45, 10],
        [110, 20],
      ]) {
        const p = await page(offset, limit, failing(where));
        expect(p.hits.map((h) => h.id)).toEqual(lexical.slice(offset, offset + limit));
        expect(p.next).toEqual(offset + limit < lexical.length ? { offset: offset + limit } : null);
      }
  });
});
