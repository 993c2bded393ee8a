// The background half of the cortex's term statistics: lookups by a query word, the idf blend, the
// per-word factor on FTS5's bm25, and the row count read from FTS5's averages record.
import { describe, expect, it } from "vitest";
import {
  BACKGROUND_DOCUMENTS,
  BACKGROUND_MIN_DOCUMENT_FREQUENCY,
  BACKGROUND_TERMS,
} from "../../services/cortex/background-terms";
import {
  blendedIdf,
  fts5Idf,
  fts5RowCount,
  phraseWeights,
  shippedBackground,
  termBackground,
} from "../../services/cortex/term-stats";

const backgroundHits = (word: string) => shippedBackground().hits(word);

const count = (term: string) => Number(new RegExp(`^${term} (\\d+)$`, "m").exec(BACKGROUND_TERMS)?.[1] ?? 0);

describe("term stats", () => {
  it("looks a word up by its stem; a joined word by its rarest part; an unseen one as 0", () => {
    expect(count("guitar")).toBeGreaterThanOrEqual(BACKGROUND_MIN_DOCUMENT_FREQUENCY);
    expect(backgroundHits("guitars")).toBe(count("guitar"));
    expect(backgroundHits("Guitar")).toBe(count("guitar"));
    expect(backgroundHits("time-guitar")).toBe(Math.min(count("time"), count("guitar")));
    expect(backgroundHits("qzxv-9137-unseen")).toBe(0);
    expect(count("time")).toBeGreaterThan(count("guitar") * 20);
    expect(shippedBackground().documents).toBe(BACKGROUND_DOCUMENTS);
    // Any other background (the bench's held-out folds) answers the same way from its own counts.
    const own = termBackground(10, new Map([["mail", 3]]));
    expect([own.hits("e-mails"), own.hits("mailing"), own.hits("post")]).toEqual([0, 3, 0]);
  });

  it("blends the shard's counts with the background's, positive for every word", () => {
    // A word in most of a small shard's rows: FTS5 floors its idf at 1e-6; blended, it keeps the background's weight.
    expect(fts5Idf(10, 9)).toBe(1e-6);
    expect(blendedIdf(10, 9, { hits: 155 })).toBeGreaterThan(6);
    expect(blendedIdf(10, 9, { hits: 155 })).toBeCloseTo(
      Math.log(1 + (10 + BACKGROUND_DOCUMENTS - 164 + 0.5) / 164.5),
      12,
    );
    expect(blendedIdf(100, 100, { hits: BACKGROUND_DOCUMENTS })).toBeGreaterThan(0);
    // Rarer in chat at large weighs more, whatever the shard says.
    expect(blendedIdf(50, 40, { hits: count("guitar") })).toBeGreaterThan(blendedIdf(50, 1, { hits: count("time") }));
    // The factor swaps FTS5's idf for the blended one, squared: a word's weight is its idf in the
    // question times its idf in the turn, so a rare word outweighs several everyday ones.
    const [w] = phraseWeights(["guitar"], { rows: 500, hits: [12] });
    expect(w * fts5Idf(500, 12)).toBeCloseTo(blendedIdf(500, 12, { hits: count("guitar") }) ** 2, 9);
    const [own] = phraseWeights(["guitar"], { rows: 500, hits: [12] }, termBackground(1000, new Map([["guitar", 4]])));
    expect(own * fts5Idf(500, 12)).toBeCloseTo(blendedIdf(500, 12, { hits: 4, documents: 1000 }) ** 2, 9);
    // Twice the idf is four times the weight, whatever the term-frequency part.
    const rare = termBackground(1000, new Map([["time", 400]]));
    const [timeWeight, luthierWeight] = phraseWeights(["time", "luthier"], { rows: 500, hits: [12, 12] }, rare);
    const ratio =
      blendedIdf(500, 12, { hits: 0, documents: 1000 }) / blendedIdf(500, 12, { hits: 400, documents: 1000 });
    expect(luthierWeight / timeWeight).toBeCloseTo(ratio ** 2, 9);
  });

  it("reads FTS5's row count from its averages record (a big-endian varint, then the token totals)", () => {
    expect(fts5RowCount(new Uint8Array([0x05, 0x20]))).toBe(5);
    expect(fts5RowCount(new Uint8Array([0x81, 0x0c, 0x99]).buffer)).toBe(140);
    expect(fts5RowCount([0x85, 0xb6, 0x24, 0x01])).toBe((5 << 14) + (0x36 << 7) + 0x24);
    // The ninth byte counts all eight bits (no continuation bit).
    expect(fts5RowCount(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x85]))).toBe(256 + 0x85);
    expect(fts5RowCount(null)).toBeNull();
    expect(fts5RowCount(new Uint8Array([0x80]))).toBeNull();
  });
});
