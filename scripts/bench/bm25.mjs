// A textbook Okapi BM25 (k1 1.2, b 0.75, lowercase word tokens, no stemming, any term matches):
// the baseline the cortex is measured against, over exactly the turns the cortex holds.
const tokens = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export function bm25Index(docs) {
  const tf = docs.map((d) => {
    const m = new Map();
    for (const t of tokens(d)) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  });
  const len = tf.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  const avg = len.reduce((a, b) => a + b, 0) / Math.max(1, len.length);
  const df = new Map();
  for (const m of tf) for (const t of m.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const N = docs.length;
  return (query, k) => {
    const q = [...new Set(tokens(query))];
    const scored = tf.map((m, i) => {
      let s = 0;
      for (const t of q) {
        const f = m.get(t);
        if (!f) continue;
        const n = df.get(t);
        s += Math.log(1 + (N - n + 0.5) / (n + 0.5)) * ((f * 2.2) / (f + 1.2 * (0.25 + (0.75 * len[i]) / avg)));
      }
      return [i, s];
    });
    return scored
      .filter(([, s]) => s > 0)
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, k)
      .map(([i]) => i);
  };
}
