// The index outbox's vector step (durable-objects/conversation/index-outbox.ts): after a run wrote
// documents, the tenant's cortex shard embeds what has no vector yet and forgets what was deleted.
// A failure throws into the outbox, which retries by alarm like any other indexing failure.
import { cortexFor } from "../cortex/routing";

/** True when documents are left for another run (the outbox keeps its alarm). */
export async function writeVectors(env: Pick<Env, "DB" | "CORTEX">, tenantId: string): Promise<boolean> {
  return (await cortexFor(env, tenantId)).syncVectors(tenantId);
}
