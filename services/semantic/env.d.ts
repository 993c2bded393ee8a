// The semantic path's switch (services/semantic/select.ts). Its bindings, AI and VECTORIZE, come
// from wrangler.toml's production environment, so `wrangler types` already makes them optional.
interface __BaseEnv_Env {
  /** "local": the hashed embedding into SQLite; "off": lexical only even where AI and VECTORIZE are bound. */
  SEMANTIC_SEARCH?: string;
}
