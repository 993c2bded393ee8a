// A text embedding that needs no model and no download: the feature-hashing trick (Weinberger et
// al., 2009) over the text's subject words and their character trigrams, sublinear counts, signed
// buckets, L2-normalized, so the dot product of two vectors is their cosine similarity. Words give
// the lexical signal; trigrams let "hiking" meet "hike" and "colour" meet "color" where exact
// terms do not. It is the local stand-in for a learned embedding (services/semantic), not one:
// it knows nothing of synonyms. Pure: tested directly.
import { STOPWORDS } from "./stopwords";

/** The local fallback's own width (its vectors stay in the shard's SQLite, never in the deployed index). */
export const HASHED_DIMENSIONS = 384;
/** A trigram feature weighs this much against a whole word: trigrams blur, words are exact. */
const TRIGRAM_WEIGHT = 0.35;

/** 32-bit FNV-1a over UTF-16 code units: fast, stable across runs and platforms. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Feature -> occurrences: subject words ("w:hike") and the trigrams of "#word#" ("t:#hi"). */
export function textFeatures(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (f: string) => counts.set(f, (counts.get(f) ?? 0) + 1);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOPWORDS.has(word)) continue;
    add(`w:${word}`);
    const padded = `#${word}#`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`);
  }
  return counts;
}

/** The unit-length hashed vector of `text` (all zeros when it has no subject words). */
export function hashedEmbedding(text: string, dimensions = HASHED_DIMENSIONS): Float32Array {
  const v = new Float32Array(dimensions);
  for (const [feature, count] of textFeatures(text)) {
    const h = fnv1a(feature);
    // Sublinear: a word said ten times is not ten times the evidence. The top bit picks the sign,
    // so collisions cancel on average instead of piling up.
    const weight = (feature.startsWith("t:") ? TRIGRAM_WEIGHT : 1) * (1 + Math.log(count));
    v[h % dimensions] += h & 0x80000000 ? -weight : weight;
  }
  return normalize(v);
}

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm === 0) return v;
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
  return v;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
