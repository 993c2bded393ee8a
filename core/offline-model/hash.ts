/**
 * Small synchronous hashing helpers. Everything the offline model derives
 * (ids, prose seeds, cache keys) must be a pure function of the request, and
 * crypto.subtle is async, so we use a pure-JS 64-bit hash (two FNV-1a style
 * 32-bit lanes with different primes) — plenty for ids and cache keys, not a
 * security boundary.
 */

export interface Hash64 {
  hi: number;
  lo: number;
}

const SEED: Hash64 = { hi: 0x811c9dc5, lo: 0x01000193 };

/** Fold `text` into a running hash so long prefixes can be hashed incrementally. */
export function hashUpdate(state: Hash64, text: string): Hash64 {
  let hi = state.hi;
  let lo = state.lo;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    hi = Math.imul(hi ^ c, 0x01000193);
    lo = Math.imul(lo ^ c, 0x5bd1e995);
    lo ^= lo >>> 15;
  }
  // Mixing in the length separates "ab"+"c" from "a"+"bc" across chained updates.
  hi = Math.imul(hi ^ text.length, 0x85ebca6b);
  lo = Math.imul(lo ^ (text.length >>> 0), 0xc2b2ae35);
  return { hi: hi >>> 0, lo: lo >>> 0 };
}

export function hashString(text: string): Hash64 {
  return hashUpdate(SEED, text);
}

export function hashHex(hash: Hash64): string {
  return hash.hi.toString(16).padStart(8, "0") + hash.lo.toString(16).padStart(8, "0");
}

/** 32-bit seed for the prose generator. */
export function hashSeed(text: string): number {
  return hashString(text).hi;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Anthropic-looking id body ("01" + 22 base62 chars) derived from `text`. */
export function idFrom(text: string): string {
  let out = "01";
  let state = hashString(text);
  while (out.length < 24) {
    state = hashUpdate(state, out);
    for (const lane of [state.hi, state.lo]) {
      let n = lane;
      for (let k = 0; k < 5 && out.length < 24; k++) {
        out += BASE62[n % 62];
        n = Math.floor(n / 62);
      }
    }
  }
  return out;
}

/** Deterministic PRNG (mulberry32) so generated prose and chunk sizes are reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
