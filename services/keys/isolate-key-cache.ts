// The isolate's layer of the key cache (auth.ts): lookups this isolate made, each trusted until the
// `until` of the D1 read behind it. Module state in auth.ts, so it lives as long as the isolate;
// plain code with its clock passed in, so it is tested directly.
import type { CachedKey } from "./edge-key-cache";

export class IsolateKeyCache {
  private readonly entries = new Map<string, CachedKey>();

  constructor(private readonly maxEntries = 10_000) {}

  /** The entry for this digest while it may still be trusted at `now`, or undefined. */
  get(keyHash: string, now: number): CachedKey | undefined {
    const hit = this.entries.get(keyHash);
    return hit && hit.until > now ? hit : undefined;
  }

  set(keyHash: string, entry: CachedKey): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(keyHash, entry);
  }

  delete(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  clear(): void {
    this.entries.clear();
  }
}
