// The deployed semantic path: Workers AI embeddings (@cf/baai/bge-small-en-v1.5, 384 dimensions,
// cosine) into a Vectorize index, one namespace per tenant. Needs the AI and VECTORIZE bindings,
// which only the production environment of wrangler.toml declares, so local dev and the tests
// never need a Cloudflare account.
import { normalize } from "../../core/hashed-embedding";
import type { Embedder, VectorIndex } from "./types";

export const WORKERS_AI_MODEL = "@cf/baai/bge-small-en-v1.5";
/** Workers AI takes at most 100 texts per embedding call. */
const TEXTS_PER_CALL = 100;
/** Vectorize takes at most this many ids per delete call. */
const IDS_PER_DELETE = 1000;
/** The model reads at most 512 tokens; a longer text is cut rather than rejected. */
const MAX_CHARS = 2000;

export function workersAiEmbedder(ai: Ai): Embedder {
  return {
    model: WORKERS_AI_MODEL,
    dimensions: 384,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += TEXTS_PER_CALL) {
        const res = (await ai.run(WORKERS_AI_MODEL, {
          text: texts.slice(i, i + TEXTS_PER_CALL).map((t) => t.slice(0, MAX_CHARS)),
        })) as { data: number[][] };
        out.push(...res.data.map((v) => normalize(Float32Array.from(v))));
      }
      return out;
    },
  };
}

export function vectorizeIndex(index: VectorizeIndex): VectorIndex {
  return {
    async upsert(tenantId, items) {
      if (items.length)
        await index.upsert(items.map((it) => ({ id: it.id, values: Array.from(it.vector), namespace: tenantId })));
    },
    async query(tenantId, vector, topK) {
      // Vectorize answers at most 100 matches when values and metadata are left out.
      const res = await index.query(Array.from(vector), { topK: Math.min(topK, 100), namespace: tenantId });
      return res.matches.map((m) => ({ id: m.id, score: m.score }));
    },
    async delete(_tenantId, ids) {
      // Vector ids are digests of tenant-scoped document ids (catch-up.ts), so an id names one tenant's vector.
      for (let i = 0; i < ids.length; i += IDS_PER_DELETE) await index.deleteByIds(ids.slice(i, i + IDS_PER_DELETE));
    },
  };
}
