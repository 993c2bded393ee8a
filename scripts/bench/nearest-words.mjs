// The in-process ranking bench:recall-tune re-weighs, and its "nearest words" lever, shared with
// bench:recall-public (which reports the lever on the held-out sets, where nothing is chosen).
// A question's words are looked up one by one in an FTS5 index of the turns (the cortex's
// tokenizer); each match's bm25 divided by FTS5's idf is its term-frequency part, and a ranking
// is Σ weight(word) × part. The shipped weights are the cortex's (services/cortex/term-stats.ts):
// the blended idf squared, the 16 rarest words the turns hold, the tenant's everyday words left out
// unless one is the rarest.
// Two expansions, neither adopted (inside the noise on the tuning set; docs/measurements.md,
// "Recall levers on the tuning set"): the nearest words, each kept word joined by its nearest words
// in the tenant's own vocabulary (GloVe vectors from WORD_VECTORS_DIR, made by word-vectors.mjs), so
// a question about "camping" also finds "hiking" and "campsites"; and feedback, the question
// searched again with words from its first hits.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

const phrase = (w) => `"${w.replace(/"/g, '""')}"`;

/** An in-process FTS5 index of `turns` (rowid = index + 1), with the cortex's tokenizer. */
export function turnIndex(turns) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE turn USING fts5(body, tokenize='porter unicode61')`);
  const insert = db.prepare(`INSERT INTO turn (rowid, body) VALUES (?, ?)`);
  db.exec("BEGIN");
  turns.forEach((t, i) => insert.run(i + 1, t.text.slice(0, 100_000)));
  db.exec("COMMIT");
  return db;
}

/**
 * The per-word parts of one question over `turns`: for each query word its matching turns and
 * each one's term-frequency part (bm25 / FTS5 idf, positive), and the counts the idf needs.
 */
export function wordParts(core, db, rows, qWords) {
  return qWords.map((w) => {
    const hits = db.prepare(`SELECT rowid - 1 AS i, bm25(turn) AS s FROM turn WHERE turn MATCH ?`).all(phrase(w));
    const idf = core.fts5Idf(rows, hits.length);
    return { word: w, n: hits.length, tf: hits.map((h) => [h.i, -h.s / idf]) };
  });
}

/** What one question brings to a lever: its text, the turns, their index and vocabulary, its words' parts. */
export function questionContext(core, { db, turns, vocab }, text) {
  return {
    text,
    turns,
    db,
    vocab,
    rows: turns.length,
    parts: wordParts(core, db, turns.length, core.queryWords(text) ?? []),
  };
}

/**
 * Ranked turn indexes: Σ weight(word) × tf part, assistant turns × `assistant`, then `lift`
 * (liftByConversation; unset: none); equal scores put the later turn first, as the cortex puts the
 * newer document first.
 */
export function rank(turns, parts, weights, assistant, lift) {
  const sum = new Map();
  parts.forEach((p, j) => {
    if (!weights[j]) return;
    for (const [i, tf] of p.tf) sum.set(i, (sum.get(i) ?? 0) + weights[j] * tf);
  });
  const ranked = [...sum]
    .map(([i, s]) => [i, turns[i].role === "assistant" ? s * assistant : s])
    .sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  return (lift?.alpha ? liftByConversation(turns, ranked, lift) : ranked).map(([i]) => i);
}

/** The shipped conversation lift (services/cortex/term-stats.ts CONVERSATION_LIFT, CONVERSATION_POOL). */
export const shippedLift = (core) => ({ alpha: core.CONVERSATION_LIFT ?? 0, pool: core.CONVERSATION_POOL ?? 0 });

/**
 * search-index.ts's conversation lift over ranked [turn, score] pairs (scores positive, best
 * first; a turn's session is its conversation): each of the first `pool` gains `alpha` × the best
 * score of another of them in its session within `window` turns (the shipped form: the whole
 * session; `partner` false: never the turn's own exchange partner), and they are re-sorted; the
 * rest follow as they were.
 */
export function liftByConversation(turns, ranked, { alpha, pool, window = Number.POSITIVE_INFINITY, partner = true }) {
  const head = ranked.slice(0, pool);
  const bySession = Map.groupBy(head, ([i]) => turns[i].session);
  // A turn's exchange partner: the reply right after a person's turn, the turn right before a reply.
  const partnerOf = (i) =>
    turns[i].role === "user"
      ? turns[i + 1]?.role === "assistant"
        ? i + 1
        : -1
      : turns[i - 1]?.role === "user"
        ? i - 1
        : -1;
  const lifted = head.map(([i, s]) => {
    let best = 0;
    for (const [j, other] of bySession.get(turns[i].session))
      if (j !== i && Math.abs(j - i) <= window && (partner || j !== partnerOf(i))) best = Math.max(best, other);
    return [i, s + alpha * best];
  });
  return [...lifted.sort((a, b) => b[1] - a[1] || b[0] - a[0]), ...ranked.slice(pool)];
}

/** A word's shipped weight: its blended idf (the tenant's counts and `background`'s) to IDF_EXPONENT. */
export const shippedWeight = (core, p, rows, background) =>
  core.blendedIdf(rows, p.n, { hits: background.hits(p.word), documents: background.documents }) **
  (core.IDF_EXPONENT ?? 1);

/**
 * The weights `weights` of `parts`, but only the `k` largest among words some turn holds (ties at
 * the last place all stay): the `k` rarest words, as the shipped ranking keeps them.
 */
export function rarest(parts, weights, k) {
  const held = weights.filter((_, j) => parts[j].n > 0);
  const cut = [...held].sort((a, b) => b - a)[k - 1] ?? 0;
  return weights.map((x, j) => (parts[j].n > 0 && x >= cut ? x : 0));
}

/** The everyday-word rule as shipped (term-stats.ts COMMON_WORD_SHARE, COMMON_WORD_ROWS). */
const shippedEveryday = (core) => ({ share: core.COMMON_WORD_SHARE ?? 1, rows: core.COMMON_WORD_ROWS ?? 0 });

/** Whether a word matching `n` of `rows` turns is one of the tenant's everyday words: in more than `share` of them and `floor`. */
const everyday = (core, n, rows, { share, rows: floor } = shippedEveryday(core)) => n > Math.max(share * rows, floor);

/**
 * The shipped weights of a question's words: the rarest MAX_QUERY_WORDS, less everyday words
 * unless the rarest; `rule` ({share, rows}) replaces the shipped everyday-word rule.
 */
export function shippedWeights(core, c, background, rule = shippedEveryday(core)) {
  const weight = rarest(
    c.parts,
    c.parts.map((p) => shippedWeight(core, p, c.rows, background)),
    core.MAX_QUERY_WORDS ?? Number.POSITIVE_INFINITY,
  );
  const top = Math.max(...weight);
  return weight.map((x, j) => (x > 0 && (!everyday(core, c.parts[j].n, c.rows, rule) || x === top) ? x : 0));
}

/**
 * The shipped ranking of a question's turns (bench:recall-tune's shipped row): its words' shipped
 * weights (`weights`, when already taken), the speaker weight and the conversation lift.
 */
export const shippedRanking = (core, c, background, weights = shippedWeights(core, c, background)) =>
  rank(c.turns, c.parts, weights, core.assistantWeight(c.text), shippedLift(core));

/**
 * Word vectors from WORD_VECTORS_DIR (words.txt, one per line; vec.f32, unit vectors of `dim`
 * float32s in the same order), or null when it is unset.
 */
export function wordVectors(dim = 100) {
  const dir = process.env.WORD_VECTORS_DIR;
  if (!dir) return null;
  const words = readFileSync(join(dir, "words.txt"), "utf8").split("\n");
  const buf = readFileSync(join(dir, "vec.f32"));
  const vec = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  return { dim, index: new Map(words.map((w, i) => [w, i])), vec };
}

/** The turns' vocabulary that has vectors (no function words, no numbers): words, their unit vectors packed. */
export function vocabularyOf(core, vectors, turns) {
  const seen = new Set();
  for (const t of turns) for (const w of t.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) seen.add(w);
  const words = [...seen].filter((w) => vectors.index.has(w) && !core.STOPWORDS.has(w) && !/^\d+$/.test(w));
  const D = vectors.dim;
  const mat = new Float32Array(words.length * D);
  words.forEach((w, i) => {
    const at = vectors.index.get(w);
    mat.set(vectors.vec.subarray(at * D, (at + 1) * D), i * D);
  });
  return { words, mat };
}

/** The `k` words of `vocab` nearest `word` (cosine >= `floor`), best first: [word, cosine]. */
export function neighbours(vectors, vocab, word, k, floor) {
  const at = vectors.index.get(word);
  if (at === undefined) return [];
  const D = vectors.dim;
  const q = vectors.vec.subarray(at * D, (at + 1) * D);
  const best = [];
  for (let i = 0; i < vocab.words.length; i++) {
    let d = 0;
    for (let j = 0; j < D; j++) d += q[j] * vocab.mat[i * D + j];
    if (d < floor || vocab.words[i] === word) continue;
    best.push([vocab.words[i], d]);
    if (best.length > 4 * k) {
      best.sort((a, b) => b[1] - a[1]);
      best.length = k;
    }
  }
  return best.sort((a, b) => b[1] - a[1]).slice(0, k);
}

/** The grid's best on the tuning set (recall@5 +0.003 on 1,350 RealMem queries, inside the noise): what held-out runs report. */
export const NEAREST_PICK = { k: 3, floor: 0.6, alpha: 0.3 };

/**
 * The shipped ranking plus each kept word's `k` nearest words of the tenant's vocabulary (cosine
 * >= `floor`, sharing no stem with the question's words), each weighted `alpha` × cosine × the
 * smaller of its own shipped weight and its source word's; the tenant's everyday words are not added.
 */
export function nearestWordsRanking(core, vectors, c, background, { k, floor, alpha }) {
  const kept = shippedWeights(core, c, background);
  if (!c.vocab) return shippedRanking(core, c, background, kept);
  const stems = new Set(c.parts.flatMap((p) => core.ftsTerms(p.word)));
  const extra = new Map(); // word -> [cosine, index of the word it joins]
  c.parts.forEach((p, j) => {
    if (!kept[j]) return;
    for (const [w, sim] of neighbours(vectors, c.vocab, p.word.toLowerCase(), k, floor)) {
      if (core.ftsTerms(w).some((t) => stems.has(t))) continue;
      if (!extra.has(w) || extra.get(w)[0] < sim) extra.set(w, [sim, j]);
    }
  });
  const words = [...extra.keys()];
  const parts = wordParts(core, c.db, c.rows, words);
  const weights = parts.map((p, i) => {
    const [sim, j] = extra.get(words[i]);
    if (!p.n || everyday(core, p.n, c.rows)) return 0;
    return alpha * sim * Math.min(shippedWeight(core, p, c.rows, background), kept[j]);
  });
  return rank(c.turns, [...c.parts, ...parts], [...kept, ...weights], core.assistantWeight(c.text), shippedLift(core));
}

/** The feedback grid's best on the tuning set (+0.002 recall@5 on 1,350 RealMem queries, inside the noise). */
export const FEEDBACK_PICK = { docs: 3, terms: 10, beta: 0.2 };

/**
 * The shipped ranking searched again with words from its own first hits (pseudo-relevance
 * feedback, what the doctrine asks of the model: "search again with words from the first hits"):
 * the `docs` best turns' words (no function words, numbers, stems of the question's or the
 * tenant's everyday words), the `terms` of them with the most occurrences there times their
 * shipped weight, each added at `beta` × its shipped weight (capped at the question's top weight).
 */
export function feedbackRanking(core, c, background, { docs, terms, beta }) {
  const kept = shippedWeights(core, c, background);
  const assistant = core.assistantWeight(c.text);
  const first = shippedRanking(core, c, background, kept);
  const stems = new Set(c.parts.flatMap((p) => core.ftsTerms(p.word)));
  const counts = new Map();
  for (const i of first.slice(0, docs))
    for (const w of c.turns[i].text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
      if (!core.STOPWORDS.has(w) && !/^\d+$/.test(w) && !core.ftsTerms(w).some((t) => stems.has(t)))
        counts.set(w, (counts.get(w) ?? 0) + 1);
  const candidates = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 4 * terms);
  const parts = wordParts(
    core,
    c.db,
    c.rows,
    candidates.map(([w]) => w),
  );
  const top = Math.max(0, ...kept);
  const scored = parts
    .map((p, i) => ({ i, w: everyday(core, p.n, c.rows) || !p.n ? 0 : shippedWeight(core, p, c.rows, background) }))
    .map((x) => ({ ...x, s: x.w * candidates[x.i][1] }))
    .filter((x) => x.w > 0)
    .sort((a, b) => b.s - a.s)
    .slice(0, terms);
  const weights = parts.map(() => 0);
  for (const x of scored) weights[x.i] = beta * Math.min(x.w, top);
  return rank(c.turns, [...c.parts, ...parts], [...kept, ...weights], assistant, shippedLift(core));
}
