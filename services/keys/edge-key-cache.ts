// The colo-wide layer of the key cache: one Cache API entry per key digest, shared by every isolate
// of the data center, so a busy key costs one D1 read per colo per AUTH_CACHE_MS instead of one per
// isolate. The Cache API never replicates between data centers (and is a no-op on *.workers.dev),
// so revocation reaches the revoking colo only; every other colo's entry lapses at the `until`
// stored in it, which is the same bound the isolate layer keeps.
//
// Revocation writes a tombstone under its own URL besides deleting the entry. A lookup that read D1
// before the revocation (in any isolate of the colo) may still put its entry after the delete; it
// can never overwrite the tombstone, and a read trusts no entry while a tombstone stands.

const CACHE_NAME = "context-chat:keys";
// Any URL works as a Cache API key; this host is never fetched.
const keyUrl = (keyHash: string) => `https://keys.context-chat.invalid/${keyHash}`;
const revokedUrl = (keyHash: string) => `https://keys.context-chat.invalid/revoked/${keyHash}`;

/** The tenant and key id an active key belongs to (auth.ts re-exports it). */
export interface ActiveKey {
  tenantId: string;
  keyId: string;
}

export interface CachedKey {
  key: ActiveKey | null;
  /** Epoch ms after which the entry must not be trusted, whatever the Cache API still holds. */
  until: number;
}

const open = () => caches.open(CACHE_NAME);

export async function readEdgeKey(keyHash: string, now: number): Promise<CachedKey | null> {
  const cache = await open();
  const [hit, tombstone] = await Promise.all([cache.match(keyUrl(keyHash)), cache.match(revokedUrl(keyHash))]);
  const revoked = tombstone ? ((await tombstone.json()) as { until: number }) : null;
  if (revoked && revoked.until > now) return { key: null, until: revoked.until };
  if (!hit) return null;
  const entry = (await hit.json()) as CachedKey;
  return entry.until > now ? entry : null;
}

export async function writeEdgeKey(keyHash: string, entry: CachedKey, now: number): Promise<void> {
  const seconds = Math.ceil((entry.until - now) / 1000);
  if (seconds <= 0) return;
  await (await open()).put(
    keyUrl(keyHash),
    Response.json(entry, { headers: { "cache-control": `max-age=${seconds}` } }),
  );
}

/** Refuses the key in this colo until `until` (when every entry a lookup begun before now could write has lapsed). */
export async function revokeEdgeKey(keyHash: string, until: number, now: number): Promise<void> {
  const cache = await open();
  const seconds = Math.ceil((until - now) / 1000);
  await cache.put(
    revokedUrl(keyHash),
    Response.json({ until }, { headers: { "cache-control": `max-age=${seconds}` } }),
  );
  await cache.delete(keyUrl(keyHash));
}
