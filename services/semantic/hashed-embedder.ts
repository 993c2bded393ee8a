// The local Embedder: core/hashed-embedding's feature-hashed words and trigrams. Runs in the
// worker, downloads nothing, same input -> same vector on every isolate.
import { HASHED_DIMENSIONS, hashedEmbedding } from "../../core/hashed-embedding";
import type { Embedder } from "./types";

export const hashedEmbedder: Embedder = {
  model: "hashed-words-trigrams-v1",
  dimensions: HASHED_DIMENSIONS,
  embed: async (texts) => texts.map((t) => hashedEmbedding(t)),
};
