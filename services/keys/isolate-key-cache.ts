// The isolate's layer of the key cache (auth.ts): lookups this isolate made, each trusted until the
// `until` of the D1 read behind it. Module state in auth.ts, so it lives as long as the isolate;
// plain code with its clock passed in, so it is tested directly.
//
// Active keys and digests with no active key are held apart, each within its own bound, and a full
// map makes room by dropping its least recently used entry: anyone can send unknown keys, so they
// must never push out the keys in use (a full cache used to be emptied whole).
//
// The isolate trusts an entry for at most ISOLATE_RECHECK_MS before asking the data center's layer
// again, which holds the tombstone a revocation leaves: so a key revoked by any isolate of the data
// center stops working in every other isolate there within that time, not the whole AUTH_CACHE_MS.
import type { ActiveKey, CachedKey } from "./edge-key-cache";

/** Keys in use by one isolate: far more than a busy isolate serves in a minute. */
export const MAX_ACTIVE_ENTRIES = 10_000;
/** Digests D1 had no active key for (typos, revoked and expired keys, guesses). */
export const MAX_INACTIVE_ENTRIES = 1_000;
/** How long the isolate answers from its own memory before reading the data center's layer again. */
export const ISOLATE_RECHECK_MS = 5_000;

export class IsolateKeyCache {
  // Maps keep insertion order: an entry is moved to the end when used, so the first is the least recently used.
  private readonly active = new Map<string, CachedKey>();
  private readonly inactive = new Map<string, CachedKey>();
  /**
   * Digests this isolate revoked, each until the last moment an entry from a lookup begun before
   * the revocation could run to. Only revocations of the last AUTH_CACHE_MS are held.
   */
  private readonly revoked = new Map<string, number>();

  constructor(
    private readonly maxActive = MAX_ACTIVE_ENTRIES,
    private readonly maxInactive = MAX_INACTIVE_ENTRIES,
    private readonly recheckMs = ISOLATE_RECHECK_MS,
  ) {}

  /** The entry for this digest while it may still be trusted at `now`, or undefined. */
  get(keyHash: string, now: number): CachedKey | undefined {
    const revokedUntil = this.revokedUntil(keyHash, now);
    if (revokedUntil) return { key: null, until: revokedUntil };
    for (const map of [this.active, this.inactive]) {
      const hit = map.get(keyHash);
      if (!hit) continue;
      map.delete(keyHash);
      if (hit.until <= now) return undefined;
      map.set(keyHash, hit);
      return hit;
    }
    return undefined;
  }

  /**
   * Stores what a lookup begun at `now` found and answers it, unless this isolate revoked the key
   * since: then the lookup read D1 (or the colo's cache) too early, and the answer is null with
   * nothing stored, so a late write never brings a revoked key back. The entry is held here for at
   * most `recheckMs`; what it answers is the lookup's result either way.
   */
  remember(keyHash: string, entry: CachedKey, now: number): ActiveKey | null {
    if (this.revokedSince(keyHash, now)) return null;
    this.active.delete(keyHash);
    this.inactive.delete(keyHash);
    const [map, max] = entry.key ? [this.active, this.maxActive] : [this.inactive, this.maxInactive];
    if (map.size >= max) map.delete(map.keys().next().value as string);
    map.set(keyHash, { key: entry.key, until: Math.min(entry.until, now + this.recheckMs) });
    return entry.key;
  }

  /** Whether this isolate revoked the key after a lookup begun at `now` started. */
  revokedSince(keyHash: string, now: number): boolean {
    return this.revokedUntil(keyHash, now) > 0;
  }

  /** Drops the digest's entry and refuses it until `until`, whatever a lookup still in flight stores. */
  revoke(keyHash: string, until: number, now: number): void {
    for (const [hash, end] of this.revoked) if (end <= now) this.revoked.delete(hash);
    this.active.delete(keyHash);
    this.inactive.delete(keyHash);
    this.revoked.set(keyHash, Math.max(until, this.revoked.get(keyHash) ?? 0));
  }

  clear(): void {
    this.active.clear();
    this.inactive.clear();
    this.revoked.clear();
  }

  private revokedUntil(keyHash: string, now: number): number {
    const until = this.revoked.get(keyHash) ?? 0;
    return until > now ? until : 0;
  }
}
