// The semantic path's two seams. Deployed: Workers AI embeddings into Vectorize. Local: a hashed
// embedding computed in the worker into SQLite (README "Memory and recall" says which runs where).

/** Texts -> unit-length vectors, one per text, all of `dimensions` length. */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export interface VectorMatch {
  id: string;
  /** Cosine similarity: higher is closer. */
  score: number;
}

/** Vectors kept per tenant: a query never sees another tenant's ids. */
export interface VectorIndex {
  upsert(tenantId: string, items: readonly { id: string; vector: Float32Array }[]): Promise<void>;
  query(tenantId: string, vector: Float32Array, topK: number): Promise<VectorMatch[]>;
  delete(tenantId: string, ids: readonly string[]): Promise<void>;
}

export interface SemanticPath {
  mode: "deployed" | "local";
  embedder: Embedder;
  index: VectorIndex;
}
