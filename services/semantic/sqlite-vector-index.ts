// The local VectorIndex: float32 vectors in the cortex shard's SQLite (table local_vectors, services/cortex/schema.ts), queried by
// exact cosine over the tenant's rows. Exact and simple; it reads every vector of the tenant, so
// it is for local use and tests, not for a tenant with millions of documents (that is Vectorize).
import type { ShardDatabase } from "../cortex/search-index";
import { dot } from "../../core/hashed-embedding";
import type { VectorIndex, VectorMatch } from "./types";

const ROWS_PER_BATCH = 50;

/** D1 hands a BLOB back as an ArrayBuffer or as an array of byte values, depending on the runtime. */
function toVector(blob: ArrayBuffer | number[]): Float32Array {
  const bytes = blob instanceof ArrayBuffer ? new Uint8Array(blob) : Uint8Array.from(blob);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

export function sqliteVectorIndex(db: ShardDatabase): VectorIndex {
  return {
    async upsert(tenantId, items) {
      const put = db.prepare(
        `INSERT INTO local_vectors (tenant_id, vec_id, vector) VALUES (?, ?, ?) ON CONFLICT(tenant_id, vec_id) DO UPDATE SET vector = excluded.vector`,
      );
      const statements = items.map((it) =>
        put.bind(
          tenantId,
          it.id,
          new Uint8Array(it.vector.buffer, it.vector.byteOffset, it.vector.byteLength).slice().buffer,
        ),
      );
      for (let i = 0; i < statements.length; i += ROWS_PER_BATCH)
        await db.batch(statements.slice(i, i + ROWS_PER_BATCH));
    },
    async query(tenantId, vector, topK) {
      const { results } = await db
        .prepare(`SELECT vec_id AS id, vector FROM local_vectors WHERE tenant_id = ?`)
        .bind(tenantId)
        .all<{ id: string; vector: ArrayBuffer | number[] }>();
      const scored: VectorMatch[] = results.map((r) => ({ id: r.id, score: dot(vector, toVector(r.vector)) }));
      return scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, topK);
    },
    async delete(tenantId, ids) {
      const del = db.prepare(`DELETE FROM local_vectors WHERE tenant_id = ? AND vec_id = ?`);
      const statements = ids.map((id) => del.bind(tenantId, id));
      for (let i = 0; i < statements.length; i += ROWS_PER_BATCH)
        await db.batch(statements.slice(i, i + ROWS_PER_BATCH));
    },
  };
}
