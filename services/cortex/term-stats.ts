// Term statistics for the cortex's ranking that do not depend on which tenants share a shard.
//
// BM25 weighs each query word by its idf: how rare the word is among the documents. FTS5 counts
// that over its own table, so once each tenant has its own shard a word's weight comes from that
// tenant's history alone: a word the person uses all the time (their dog's name, their job) weighs
// little in their own searches, however telling it is. Counting it over one shared index instead
// let every tenant's words move every other tenant's rankings. The cortex does neither: a word's
// count is the shard's plus a fixed background's (background-terms.ts over data/cortex, chat turns from a public
// corpus), as if those turns were indexed beside the tenant's but never returned. The idf is
// Lucene's form of BM25's, log(1 + (N - n + 0.5) / (n + 0.5)), positive for every word.
//
// A word's weight is that idf squared (IDF_EXPONENT): its weight in the question times its weight
// in the turn, as in the vector-space model (Lucene's classic similarity weighs a term by idf² for
// the same reason). A person's question is a whole turn, a name or a subject once among many
// everyday words ("okay so I need to plan the next few things ... about Marisol"); with the log idf
// alone, a turn sharing four everyday words outscores the one holding the name. Squared, a word
// twice as rare weighs four times as much. Measured on the tuning set only
// (docs/measurements.md#recall-levers-on-the-tuning-set): exponent 2 +0.025 recall@5 over 1 on all
// 1,350 RealMem queries (paired bootstrap 95% interval +0.016 to +0.034, the same sign in both
// halves of the personas); 1.5, 2.5 and 3 no better than 2 beyond the noise.
//
// FTS5's bm25() cannot take another idf, but its score is a sum over the query's phrases of
// idf(phrase) × a term-frequency part, so the ranking asks for each phrase alone and multiplies
// its bm25 by blended idf² / FTS5 idf (phraseWeights). With every weight 1 that sum is FTS5's own
// score for the OR query, exactly.
import { ftsTerms } from "../../core/fts-terms";
import { BACKGROUND_DOCUMENTS, BACKGROUND_TERMS, parseBackgroundCounts } from "./background-terms";

/** A background: how many documents it has, and how many hold a query word. */
export interface TermBackground {
  documents: number;
  hits(word: string): number;
}

/**
 * A background over `documents` documents from its stem counts. A word FTS5 splits ("e-mail") is a
 * phrase of its parts; its count is its rarest part's, an upper bound. A stem missing counts 0.
 */
export function termBackground(documents: number, counts: ReadonlyMap<string, number>): TermBackground {
  return {
    documents,
    hits(word) {
      const terms = ftsTerms(word);
      return terms.length ? Math.min(...terms.map((t) => counts.get(t) ?? 0)) : 0;
    },
  };
}

let shipped: TermBackground | undefined;

/** The background the cortex ranks with (background-terms.ts), parsed on first use. */
export function shippedBackground(): TermBackground {
  if (shipped) return shipped;
  shipped = termBackground(BACKGROUND_DOCUMENTS, parseBackgroundCounts(BACKGROUND_TERMS));
  return shipped;
}

/** The power of the blended idf a word is weighted by (2: its idf in the question times its idf in the turn). */
export const IDF_EXPONENT = 2;

/**
 * How many of a question's words a search scores: the rarest of those the tenant's rows hold
 * (highest blended idf; words tied at the last place all stay; a word no row holds would score
 * nothing, so it takes no place). A question that is a whole turn has up to 32 words, and every one
 * costs an FTS5 scan of the tenant's rows; past the rarest 16 the words are everyday ones that
 * move the ranking little. Chosen on the tuning set only (docs/measurements.md#recall-levers-on-the-tuning-set):
 * on all 1,350 RealMem queries, recall@5 0.179 against 0.177 with every word (every word minus
 * the cap −0.002, paired bootstrap 95% interval −0.004 to −0.000, the same in both halves of the
 * personas): not worse, adopted for the cost; 6 and 10 words lost recall.
 */
export const MAX_QUERY_WORDS = 16;

/**
 * A word in more than this share of the tenant's rows, and in more than COMMON_WORD_ROWS of them,
 * is not scored unless it is the question's rarest (ties kept): an everyday word of the tenant's
 * ("next", "need", its project's name) adds a small weight to thousands of rows, and scoring each of
 * them is most of a large tenant's search. Under COMMON_WORD_ROWS rows a word costs little, and a
 * small tenant's words are all in a large share of its few rows. Chosen on the tuning set only
 * (docs/measurements.md#recall-levers-on-the-tuning-set): on all 1,350 RealMem queries, on top of the
 * 16 rarest words, recall@5 0.183 against 0.179 (+0.004, paired bootstrap 95% interval −0.002 to
 * +0.010, +0.003 and +0.004 in the two halves of the personas): not worse, adopted for the cost.
 */
export const COMMON_WORD_SHARE = 0.1;
export const COMMON_WORD_ROWS = 100;

/**
 * A message's score is raised by this fraction of the best score of another message of the same
 * conversation among the ranking's first CONVERSATION_POOL documents: a conversation that holds
 * several hits is about the question, and its short turns ("Yes, last Sunday!", "ok, next step")
 * borrow its words. Below 1 it never reorders two hits of one conversation (s1 + a·s2 ≥ s2 + a·s1
 * when s1 ≥ s2); it only moves a conversation's hits past another conversation's lone one, and a
 * search within one conversation (`conversation=`) is not lifted at all. Chosen on the tuning set only
 * (docs/measurements.md#recall-levers-on-the-tuning-set): on all 1,350 RealMem queries recall@5
 * 0.214 against 0.183 (+0.031, paired bootstrap 95% interval +0.021 to +0.043, +0.041 and +0.021 in
 * the two halves of the personas); 0.6, 0.7 and 1 were no better, 0.2 to 0.4 worse, the neighbours
 * within 1 to 10 turns rather than the whole conversation no better.
 */
export const CONVERSATION_LIFT = 0.5;
/**
 * How many of the ranking's first documents the conversation lift reads and moves (a top-N, not
 * every match: a search's cost stays that of its page). 50 and 100 gave the same recall (+0.031,
 * +0.032); 20 gave +0.023.
 */
export const CONVERSATION_POOL = 50;

/** FTS5's idf (its bm25 in fts5_aux.c): log((N - n + 0.5) / (n + 0.5)), floored at 1e-6. */
export function fts5Idf(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return idf > 0 ? idf : 1e-6;
}

/**
 * The ranking's idf: the shard's counts plus the background's (how many of its documents hold the
 * word, out of `documents`, the shipped background's by default), in Lucene's form.
 */
export function blendedIdf(rows: number, hits: number, background: { hits: number; documents?: number }): number {
  const n = rows + (background.documents ?? BACKGROUND_DOCUMENTS);
  const h = hits + background.hits;
  return Math.log(1 + (n - h + 0.5) / (h + 0.5));
}

/**
 * Each query word's factor on FTS5's bm25 for that word alone, which swaps FTS5's idf for the
 * blended one squared (IDF_EXPONENT). `rows` is FTS5's own row count (the shard's), `hits` how many rows each word matches.
 */
export function phraseWeights(
  words: readonly string[],
  counts: { rows: number; hits: readonly number[] },
  background: TermBackground = shippedBackground(),
): number[] {
  return tenantPhraseWeights(
    { shardRows: counts.rows, shardHits: counts.hits, tenantRows: counts.rows, tenantHits: counts.hits },
    words,
    background,
  );
}

/** A shard's counts and one tenant's within it (a D1 shard holds many tenants). */
export interface ShardCounts {
  /** FTS5's row count and each word's matches over the whole shard: what its bm25 used. */
  shardRows: number;
  shardHits: readonly number[];
  /** The same, over the tenant's rows only: what the blended idf counts. */
  tenantRows: number;
  tenantHits: readonly number[];
}

/**
 * phraseWeights for a shard several tenants share: the factor cancels FTS5's idf (the shard's) and
 * puts in the blended idf of the tenant's own counts (squared), so other tenants in the shard move nothing
 * but the length normalization (bm25's average document length is the shard's).
 */
export function tenantPhraseWeights(
  counts: ShardCounts,
  words: readonly string[],
  background: TermBackground = shippedBackground(),
): number[] {
  return words.map(
    (word, i) =>
      blendedIdf(counts.tenantRows, counts.tenantHits[i], {
        hits: background.hits(word),
        documents: background.documents,
      }) **
        IDF_EXPONENT /
      fts5Idf(counts.shardRows, counts.shardHits[i]),
  );
}

/**
 * The row count FTS5 ranks with, from its averages record (the `_data` row with id 1: a varint
 * holding the number of rows, then each column's token total). SQLite's varints are big-endian,
 * seven bits a byte with the high bit meaning "more", the ninth byte whole. Null if absent.
 * The ranking statement reads the same varint in SQL (search-index.ts rankingStatement); this is
 * its reference, with which the tests check a shard's record against its row count.
 */
export function fts5RowCount(averages: unknown): number | null {
  const bytes =
    averages instanceof Uint8Array
      ? averages
      : averages instanceof ArrayBuffer
        ? new Uint8Array(averages)
        : Array.isArray(averages)
          ? Uint8Array.from(averages as number[])
          : null;
  if (!bytes?.length) return null;
  let value = 0;
  for (let i = 0; i < bytes.length && i < 9; i++) {
    if (i === 8) return value * 256 + bytes[i];
    value = value * 128 + (bytes[i] & 0x7f);
    if (!(bytes[i] & 0x80)) return value;
  }
  return null;
}
