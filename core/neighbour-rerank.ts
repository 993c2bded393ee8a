// Neighbour context: in a dialogue the words of a question are often split between a turn and the
// one beside it ("I got a new bike" / "Congrats on the Canyon!"), so a turn whose neighbours also
// match is likelier to be the one meant. Re-scores a ranked pool by adding a share of the scores of
// its adjacent turns (same conversation, seq ± 1) that are in the pool too. Pure: tested directly.

export interface Rankable {
  kind: string;
  conversationId: string | null;
  seq: number | null;
  /** Higher is better (a negated FTS5 bm25). */
  relevance: number;
}

export const NEIGHBOUR_SHARE = 0.5;

/** The pool in its new order; ties keep their previous order, non-messages get no neighbour share. */
export function neighbourRerank<T extends Rankable>(pool: readonly T[], share = NEIGHBOUR_SHARE): T[] {
  const at = new Map<string, number>();
  for (const h of pool) if (h.kind === "message" && h.conversationId && h.seq !== null) at.set(`${h.conversationId}:${h.seq}`, Math.max(at.get(`${h.conversationId}:${h.seq}`) ?? 0, h.relevance));
  const scored = pool.map((h, i) => {
    const near = h.kind === "message" && h.conversationId && h.seq !== null ? (at.get(`${h.conversationId}:${h.seq - 1}`) ?? 0) + (at.get(`${h.conversationId}:${h.seq + 1}`) ?? 0) : 0;
    return { h, i, s: h.relevance + share * near };
  });
  return scored.sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.h);
}
