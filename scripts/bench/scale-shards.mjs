// bench:scale's shard figures from the measured files: rows and bytes per message, the fixed
// cost of a shard, and how many messages one shard holds at the per-object storage cap.

/** Durable Objects limits: 10 GB of SQLite storage per object (decimal gigabytes). */
export const SHARD_CAP_BYTES = 10 * 1e9;

/** Shard size buckets for the search figures, by messages indexed. */
export const BUCKETS = [
  { name: "<100", lo: 0, hi: 100 },
  { name: "100-1k", lo: 100, hi: 1_000 },
  { name: "1k-10k", lo: 1_000, hi: 10_000 },
  { name: ">=10k", lo: 10_000, hi: Infinity },
];
export const bucketOf = (messages) => BUCKETS.find((b) => messages >= b.lo && messages < b.hi).name;

/** Least squares of bytes on messages: the slope is what one more message costs, the intercept a shard's floor. */
function fit(points) {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const slope = sxx ? points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / sxx : my / Math.max(1, mx);
  return { slope, intercept: my - slope * mx };
}

/** `shards` as measureShard returns them (shards without a cortex table count for bytes only). */
export function summarizeShards(shards) {
  const indexed = shards.filter((s) => s.messages > 0);
  const sum = (xs, f) => xs.reduce((a, x) => a + f(x), 0);
  const messages = sum(indexed, (s) => s.messages);
  const bytes = sum(indexed, (s) => s.bytes);
  const diskBytes = sum(indexed, (s) => s.diskBytes);
  // biome-ignore lint/suspicious/noFocusedTests: `fit` is this bench's least-squares fit, not a focused test
  const { slope, intercept } = fit(indexed.map((s) => ({ x: s.messages, y: s.bytes })));
  const tables = {};
  for (const s of indexed) for (const [t, b] of Object.entries(s.byTable)) tables[t] = (tables[t] ?? 0) + b;
  const buckets = BUCKETS.map((b) => {
    const own = indexed.filter((s) => bucketOf(s.messages) === b.name);
    const m = sum(own, (s) => s.messages);
    return { name: b.name, shards: own.length, messages: m, bytesPerMessage: m ? sum(own, (s) => s.bytes) / m : NaN };
  });
  return {
    shards: indexed.length,
    sharedShards: indexed.filter((s) => s.tenants.length > 1).length,
    messages,
    bytes,
    diskBytes,
    docsPerMessage: sum(indexed, (s) => s.docs) / Math.max(1, messages),
    ftsRowsPerMessage: sum(indexed, (s) => s.ftsRows) / Math.max(1, messages),
    bytesPerMessage: bytes / Math.max(1, messages),
    marginalBytesPerMessage: slope,
    shardFloorBytes: intercept,
    messagesAtCap: Math.floor((SHARD_CAP_BYTES - Math.max(0, intercept)) / slope),
    tableBytesPerMessage: Object.fromEntries(
      Object.entries(tables)
        .sort((a, b) => b[1] - a[1])
        .map(([t, b]) => [t, b / Math.max(1, messages)]),
    ),
    buckets,
    largest: Math.max(0, ...indexed.map((s) => s.messages)),
    smallest: Math.min(...indexed.map((s) => s.messages)),
  };
}
