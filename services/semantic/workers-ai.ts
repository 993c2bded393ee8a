// The deployed semantic path: Workers AI embeddings (@cf/baai/bge-m3: multilingual, 1,024
// dimensions, cosine, reads up to 8,192 tokens) into a Vectorize index, one namespace per tenant.
// Needs the AI and VECTORIZE bindings, which only the production environment of wrangler.toml
// declares, so local dev and the tests never need a Cloudflare account (the tests hand fakes of
// the same binding shape, test/workers/vector-outbox.test.ts).
import { normalize } from "../../core/hashed-embedding";
import type { Embedder, VectorIndex } from "./types";

export const WORKERS_AI_MODEL = "@cf/baai/bge-m3";
export const WORKERS_AI_DIMENSIONS = 1024;
/** Texts per embedding call: a batch of long chunks stays well inside one request. */
const TEXTS_PER_CALL = 50;
/** Vectorize takes at most this many vectors per upsert call. */
const VECTORS_PER_UPSERT = 1000;
/** Vectorize takes at most this many ids per delete call. */
const IDS_PER_DELETE = 1000;
/** The model reads at most 8,192 tokens; a longer text is cut here and truncated by the model rather than rejected. */
const MAX_CHARS = 8000;

export function workersAiEmbedder(ai: Ai): Embedder {
  return {
    model: WORKERS_AI_MODEL,
    dimensions: WORKERS_AI_DIMENSIONS,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += TEXTS_PER_CALL) {
        const batch = texts.slice(i, i + TEXTS_PER_CALL).map((t) => t.slice(0, MAX_CHARS));
        const res = await ai.run(WORKERS_AI_MODEL, { text: batch, truncate_inputs: true });
        const data = "data" in res ? res.data : undefined;
        if (!data || data.length !== batch.length || data.some((v) => v.length !== WORKERS_AI_DIMENSIONS))
          throw new Error(`${WORKERS_AI_MODEL} answered ${data?.length ?? "no"} embeddings for ${batch.length} texts`);
        out.push(...data.map((v) => normalize(Float32Array.from(v))));
      }
      return out;
    },
  };
}

export function vectorizeIndex(index: VectorizeIndex): VectorIndex {
  return {
    async upsert(tenantId, items) {
      // The tenant is the namespace (queries never cross it) and, for audits and repairs, metadata too.
      for (let i = 0; i < items.length; i += VECTORS_PER_UPSERT)
        await index.upsert(
          items.slice(i, i + VECTORS_PER_UPSERT).map((it) => ({
            id: it.id,
            values: Array.from(it.vector),
            namespace: tenantId,
            metadata: { tenant: tenantId },
          })),
        );
    },
    async query(tenantId, vector, topK) {
      // Vectorize answers at most 100 matches when values and metadata are left out.
      const res = await index.query(Array.from(vector), { topK: Math.min(topK, 100), namespace: tenantId });
      // A match from another namespace would be a misconfigured index: dropped (the fusion also joins on the tenant).
      return res.matches
        .filter((m) => m.namespace === undefined || m.namespace === tenantId)
        .map((m) => ({ id: m.id, score: m.score }));
    },
    async delete(_tenantId, ids) {
      // Vector ids are digests of tenant-scoped document ids (catch-up.ts), so an id names one tenant's vector.
      for (let i = 0; i < ids.length; i += IDS_PER_DELETE) await index.deleteByIds(ids.slice(i, i + IDS_PER_DELETE));
    },
  };
}
