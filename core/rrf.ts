// Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each ranking gives an item
// weight / (k + rank); the sums order the fused list. Rank-based, so a BM25 score and a cosine
// similarity never have to share a scale. Pure: tested directly.

/** The paper's constant: large enough that the top of one list does not swamp the others. */
export const RRF_K = 60;

/** Fused order of `lists` with each item's summed score (best first); ties keep the order in which items were first met. */
export function reciprocalRankFusion(
  lists: readonly (readonly string[])[],
  opts: { k?: number; weights?: readonly number[] } = {},
): { id: string; score: number }[] {
  const k = opts.k ?? RRF_K;
  const score = new Map<string, number>();
  lists.forEach((list, j) => {
    const w = opts.weights?.[j] ?? 1;
    list.forEach((id, rank) => score.set(id, (score.get(id) ?? 0) + w / (k + rank + 1)));
  });
  // Map iteration is insertion order and sort is stable, so equal sums keep first-met order.
  return [...score].sort((a, b) => b[1] - a[1]).map(([id, s]) => ({ id, score: s }));
}
