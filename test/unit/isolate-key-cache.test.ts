// The isolate's layer of the key cache: active keys and unknown digests held apart, each bounded by
// dropping single least recently used entries, and revocation tombstones no late write overwrites.
import { describe, expect, it } from "vitest";
import { ISOLATE_RECHECK_MS, IsolateKeyCache } from "../../services/keys/isolate-key-cache";

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const active = (n: number) => ({ key: { tenantId: "ten_a", keyId: `key_${n}` }, until: T0 + MINUTE });
const unknown = { key: null, until: T0 + MINUTE };

describe("the isolate key cache", () => {
  it("keeps an active key's entry however many unknown digests fill it", () => {
    const cache = new IsolateKeyCache();
    cache.remember("valid", active(0), T0);
    for (let i = 0; i < 50_000; i++) cache.remember(`unknown-${i}`, unknown, T0);
    expect(cache.get("valid", T0 + 1)?.key).toEqual(active(0).key);
    // The latest unknown digests are still answered from memory; the earliest have made room.
    expect(cache.get("unknown-49999", T0 + 1)?.key).toBeNull();
    expect(cache.get("unknown-0", T0 + 1)).toBeUndefined();
  });

  it("makes room among active keys by dropping the least recently used one, not all of them", () => {
    const cache = new IsolateKeyCache();
    cache.remember("key-0", active(0), T0);
    for (let n = 1; n <= 20_000; n++) {
      cache.remember(`key-${n}`, active(n), T0);
      // key-0 is used on every request, so it is never the least recently used.
      if (!cache.get("key-0", T0)) expect.fail(`key-0 dropped after ${n} more keys`);
    }
    // The first ones to go were those unused longest; the latest thousands are all still held.
    expect(cache.get("key-1", T0)).toBeUndefined();
    for (let n = 19_000; n <= 20_000; n++) expect(cache.get(`key-${n}`, T0)?.key).toEqual(active(n).key);
  });

  it("answers an entry until its `until` and not after", () => {
    const cache = new IsolateKeyCache(10, 10, MINUTE);
    expect(cache.remember("k", active(1), T0)).toEqual(active(1).key);
    expect(cache.get("k", T0 + MINUTE - 1)).toEqual(active(1));
    expect(cache.get("k", T0 + MINUTE)).toBeUndefined();
  });

  it("holds an entry at most ISOLATE_RECHECK_MS, however long the lookup behind it may be trusted", () => {
    const cache = new IsolateKeyCache();
    expect(cache.remember("k", active(1), T0)).toEqual(active(1).key);
    expect(cache.get("k", T0 + ISOLATE_RECHECK_MS - 1)).toEqual({ key: active(1).key, until: T0 + ISOLATE_RECHECK_MS });
    // Past it the isolate asks the data center's layer again (where a revocation leaves its tombstone).
    expect(cache.get("k", T0 + ISOLATE_RECHECK_MS)).toBeUndefined();
  });

  it("refuses a revoked digest until its tombstone ends, whatever a lookup begun before the revocation stores", () => {
    const cache = new IsolateKeyCache(10, 10, MINUTE);
    cache.remember("k", active(1), T0);
    cache.revoke("k", T0 + 10 + MINUTE, T0 + 10);
    expect(cache.get("k", T0 + 10)).toEqual({ key: null, until: T0 + 10 + MINUTE });
    // A lookup that started at T0 (before the revocation) and ends now.
    expect(cache.revokedSince("k", T0)).toBe(true);
    expect(cache.remember("k", active(1), T0)).toBeNull();
    expect(cache.get("k", T0 + MINUTE)).toEqual({ key: null, until: T0 + 10 + MINUTE });
    // Once every entry such a lookup could write has lapsed, the tombstone goes too.
    expect(cache.get("k", T0 + 10 + MINUTE)).toBeUndefined();
    expect(cache.revokedSince("k", T0 + 10 + MINUTE)).toBe(false);
  });
});
