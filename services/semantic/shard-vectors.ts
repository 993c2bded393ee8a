// The cortex shard's side of the vector writes (services/cortex/shard.ts calls these with the
// shard's D1 database: the index outbox through CortexShard.syncVectors, its deletes after each
// delete). Each runs only where this worker has a semantic path (services/semantic/select.ts):
// lexical-only deployments pay one check and no query.
import type { ShardDatabase } from "../cortex/search-index";
import { CATCH_UP_MAX_DOCS, catchUp, forgetGone } from "./catch-up";
import { type SemanticEnv, semanticPathFor } from "./select";

/** Embeds the tenant's new and changed documents, forgets its deleted ones; true when documents are left for another run. */
export async function syncShardVectors(env: SemanticEnv, db: ShardDatabase, tenantId: string): Promise<boolean> {
  const path = semanticPathFor(env, db);
  return path ? (await catchUp({ db, path, tenantId })) >= CATCH_UP_MAX_DOCS : false;
}

/**
 * After a delete in the shard: the deleted documents' vectors go at once. A failure (the index
 * unreachable) is logged, not thrown: the tombstones stay, and the next sync or search retries.
 */
export async function forgetDeletedVectors(env: SemanticEnv, db: ShardDatabase, tenantId: string): Promise<void> {
  const path = semanticPathFor(env, db);
  if (!path) return;
  try {
    await forgetGone(db, path, tenantId);
  } catch (err) {
    console.error("forgetting deleted vectors failed; the next sync retries", err);
  }
}
