// The colo-wide layer of the key cache: one Cache API entry per key digest, shared by every isolate
// of the data center, so a busy key costs one D1 read per colo per AUTH_CACHE_MS instead of one per
// isolate. The Cache API never replicates between data centers (and is a no-op on *.workers.dev),
// so revocation deletes the entry in the revoking colo only; every other colo's entry lapses at the
// `until` stored in it, which is the same bound the isolate layer keeps.
import type { ActiveKey } from "./auth";

const CACHE_NAME = "context-chat:keys";
// Any URL works as a Cache API key; this host is never fetched.
const keyUrl = (keyHash: string) => `https://keys.context-chat.invalid/${keyHash}`;

export interface CachedKey {
  key: ActiveKey | null;
  /** Epoch ms after which the entry must not be trusted, whatever the Cache API still holds. */
  until: number;
}

const open = () => caches.open(CACHE_NAME);

export async function readEdgeKey(keyHash: string, now: number): Promise<CachedKey | null> {
  const hit = await (await open()).match(keyUrl(keyHash));
  if (!hit) return null;
  const entry = (await hit.json()) as CachedKey;
  return entry.until > now ? entry : null;
}

export async function writeEdgeKey(keyHash: string, entry: CachedKey, now: number): Promise<void> {
  const seconds = Math.ceil((entry.until - now) / 1000);
  if (seconds <= 0) return;
  await (await open()).put(keyUrl(keyHash), Response.json(entry, { headers: { "cache-control": `max-age=${seconds}` } }));
}

export async function deleteEdgeKey(keyHash: string): Promise<void> {
  await (await open()).delete(keyUrl(keyHash));
}
