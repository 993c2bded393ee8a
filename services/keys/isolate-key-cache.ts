// The isolate's layer of the key cache (auth.ts): lookups this isolate made, each trusted until the
// `until` of the D1 read behind it. Module state in auth.ts, so it lives as long as the isolate;
// plain code with its clock passed in, so it is tested directly.
import type { ActiveKey } from "./auth";
import type { CachedKey } from "./edge-key-cache";

export class IsolateKeyCache {
  private readonly entries = new Map<string, CachedKey>();
  /**
   * Digests this isolate revoked, each until the last moment an entry from a lookup begun before
   * the revocation could run to. Only revocations of the last AUTH_CACHE_MS are held.
   */
  private readonly revoked = new Map<string, number>();

  constructor(private readonly maxEntries = 10_000) {}

  /** The entry for this digest while it may still be trusted at `now`, or undefined. */
  get(keyHash: string, now: number): CachedKey | undefined {
    const revokedUntil = this.revokedUntil(keyHash, now);
    if (revokedUntil) return { key: null, until: revokedUntil };
    const hit = this.entries.get(keyHash);
    return hit && hit.until > now ? hit : undefined;
  }

  /**
   * Stores what a lookup begun at `now` found and answers it, unless this isolate revoked the key
   * since: then the lookup read D1 (or the colo's cache) too early, and the answer is null with
   * nothing stored, so a late write never brings a revoked key back.
   */
  remember(keyHash: string, entry: CachedKey, now: number): ActiveKey | null {
    if (this.revokedSince(keyHash, now)) return null;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(keyHash, entry);
    return entry.key;
  }

  /** Whether this isolate revoked the key after a lookup begun at `now` started. */
  revokedSince(keyHash: string, now: number): boolean {
    return this.revokedUntil(keyHash, now) > 0;
  }

  /** Drops the digest's entry and refuses it until `until`, whatever a lookup still in flight stores. */
  revoke(keyHash: string, until: number, now: number): void {
    for (const [hash, end] of this.revoked) if (end <= now) this.revoked.delete(hash);
    this.entries.delete(keyHash);
    this.revoked.set(keyHash, Math.max(until, this.revoked.get(keyHash) ?? 0));
  }

  clear(): void {
    this.entries.clear();
    this.revoked.clear();
  }

  private revokedUntil(keyHash: string, now: number): number {
    const until = this.revoked.get(keyHash) ?? 0;
    return until > now ? until : 0;
  }
}
