// Which semantic path a worker runs, from its bindings and SEMANTIC_SEARCH:
//   AI + VECTORIZE bound (the production environment): Workers AI into Vectorize, unless "off";
//   SEMANTIC_SEARCH=local: the hashed embedding into SQLite (measured, not on by default);
//   otherwise none: the cortex is lexical only.
import { envConfig } from "../../core/env-config";
import type { CortexFusion, ShardDatabase } from "../cortex/search-index";
import { semanticFusion } from "./fusion";
import { hashedEmbedder } from "./hashed-embedder";
import { sqliteVectorIndex } from "./sqlite-vector-index";
import type { SemanticPath } from "./types";
import { vectorizeIndex, workersAiEmbedder } from "./workers-ai";

export interface SemanticEnv {
  AI?: Ai;
  VECTORIZE?: VectorizeIndex;
  SEMANTIC_SEARCH?: string;
}

/** `db`: the cortex shard's own SQLite (D1-shaped), where the local path keeps its vectors. */
export function semanticPathFor(env: SemanticEnv, db: ShardDatabase): SemanticPath | null {
  const mode = envConfig(env).SEMANTIC_SEARCH;
  if (mode === "off") return null;
  if (mode === "local") return { mode: "local", embedder: hashedEmbedder, index: sqliteVectorIndex(db) };
  if (env.AI && env.VECTORIZE)
    return { mode: "deployed", embedder: workersAiEmbedder(env.AI), index: vectorizeIndex(env.VECTORIZE) };
  return null;
}

/** The cortex's fusion hook for this worker, or undefined when the cortex is lexical only. */
export function cortexFusionFor(env: SemanticEnv, db: ShardDatabase): CortexFusion | undefined {
  const path = semanticPathFor(env, db);
  return path ? semanticFusion(path) : undefined;
}
