// The semantic path's bindings and switch (services/semantic/select.ts). AI and VECTORIZE are
// declared only in wrangler.toml's production environment, so they are optional here.
interface __BaseEnv_Env {
  /** Workers AI: the deployed embedder. */
  AI?: Ai;
  /** The Vectorize index (384 dimensions, cosine) the deployed path writes to. */
  VECTORIZE?: VectorizeIndex;
  /** "local": the hashed embedding into SQLite; "off": lexical only even where AI and VECTORIZE are bound. */
  SEMANTIC_SEARCH?: string;
}
