// The synthetic tenants of bench:scale: how many messages each tenant holds (a Zipf spread, so
// shards run from tens of messages to over ten thousand) and the text of each message, all from
// a seeded PRNG so every run indexes exactly the same bytes.

// The offline model's seeded PRNG (mulberry32): one generator for the model and the bench.
import { prng } from "../../core/offline-model/hash.ts";

export { prng };

/**
 * Messages per tenant, largest first: rank r gets a share proportional to 1/r (Zipf, s = 1), at
 * least `min`, and the shares add up to `total` exactly. With 1,000 tenants and 100,000 messages
 * the largest holds about 13,000 and the smallest about a dozen.
 */
export function tenantSizes(tenants, total, min = 10) {
  if (!Number.isInteger(tenants) || tenants < 1) throw new Error("tenants: a positive whole number");
  if (!Number.isInteger(total) || total < tenants * min)
    throw new Error(`messages: at least ${tenants * min} for ${tenants} tenants`);
  const weights = Array.from({ length: tenants }, (_, i) => 1 / (i + 1));
  const spare = total - tenants * min;
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => min + Math.floor((spare * w) / sum));
  // Rounding leaves a few messages over: the largest tenants take them, keeping the order.
  let left = total - sizes.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % tenants, left--) sizes[i]++;
  return sizes;
}

const SYLLABLES = [
  "ka",
  "to",
  "ri",
  "men",
  "sa",
  "lo",
  "ve",
  "dun",
  "pi",
  "tar",
  "no",
  "bel",
  "qui",
  "ras",
  "mo",
  "th",
  "ex",
  "ul",
  "gra",
  "fen",
  "io",
  "pra",
  "zu",
  "cor",
];

/** A vocabulary of `size` pseudo-words, the same for every seed; rank 0 is the most frequent. */
export function vocabulary(size = 6_000) {
  const random = prng(1);
  const words = new Set();
  while (words.size < size) {
    let w = "";
    const n = 2 + Math.floor(random() * 3);
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/** Draws ranks with probability proportional to 1/(r+1)^s (a Zipf-ish word frequency). */
export function zipfSampler(size, random, s = 1.07) {
  const cdf = new Float64Array(size);
  let acc = 0;
  for (let r = 0; r < size; r++) cdf[r] = acc += 1 / (r + 1) ** s;
  return () => {
    const x = random() * acc;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const WORDS = vocabulary();

/**
 * One tenant's text source: `message()` returns the next message (5 to 60 words, now and then an
 * identifier such as INV-20417 or an amount such as $1,284.50) and `query()` a search a user of
 * that tenant might type (two or three words, sometimes an identifier the tenant has used).
 */
export function tenantText(seed) {
  const random = prng(seed);
  const rank = zipfSampler(WORDS.length, random);
  const ids = [];
  const word = () => WORDS[rank()];
  const identifier = () => {
    const id = `${["INV", "PO", "TKT", "ACCT", "SKU"][Math.floor(random() * 5)]}-${10_000 + Math.floor(random() * 90_000)}`;
    if (ids.length < 200) ids.push(id);
    return id;
  };
  const amount = () =>
    `$${Math.floor(random() * 5_000).toLocaleString("en-US")}.${String(Math.floor(random() * 100)).padStart(2, "0")}`;
  return {
    message() {
      const n = 5 + Math.floor(random() * 56);
      const out = [];
      for (let i = 0; i < n; i++) {
        const x = random();
        out.push(x < 0.02 ? identifier() : x < 0.035 ? amount() : word());
      }
      return out.join(" ");
    },
    query() {
      if (ids.length && random() < 0.25) return `${ids[Math.floor(random() * ids.length)]} ${word()}`;
      const n = 2 + Math.floor(random() * 2);
      return Array.from({ length: n }, word).join(" ");
    },
  };
}
