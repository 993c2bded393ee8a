// bench:recall-tune — the cortex's ranking levers on the tuning set only (sets/index.mjs TUNING_SET,
// RealMem), in-process, with a paired bootstrap against the shipped ranking so a lever is adopted
// only when it beats the noise. It refuses any other set: held-out sets are never looked at here.
// Each question's visible turns (the sessions before it, as whole exchanges, exactly what
// bench:recall-public imports) go into an in-process FTS5 index with the cortex's tokenizer; each
// query word's bm25 is taken alone (as services/cortex/search-index.ts does), divided by FTS5's idf
// to get its term-frequency part, and every lever re-weighs those parts, so one index serves all.
//   RECALL_DATA_DIR   the sets' folder (only its realmem/ is read)
//   --limit N         questions (default: every question with evidence), by the fixed shuffle
//   --misses N        print N misses of the shipped ranking: question, evidence turn, top hit
//   --base NAME       the lever the others are compared with (default: the shipped ranking)
//   --rewrite         also rank the scripted rewrite (query-rewrite.mjs) under each listed lever
//   --by-length       also each lever against the base by how many content words of the question the
//                     ranking looks up (queryWords: 0–8, 9–16, 17–32)
//   WORD_VECTORS_DIR  also rank with each question's words joined by their nearest words in the
//                     tenant's vocabulary (GloVe vectors; word-vectors.mjs makes the folder)
// Lever families measured on 2026-12-05 and not adopted (docs/measurements.md): an echo discount
// (an assistant turn's words discounted only where the turn it answers has them too; its rows rank
// without the conversation lift), the nearest words and feedback (nearest-words.mjs), and one hit
// per exchange. Adopted the same day: the conversation lift (nearest-words.mjs liftByConversation,
// services/cortex/term-stats.ts CONVERSATION_LIFT); every other lever ranks with it.
import { cpus, loadavg } from "node:os";
import { importTypeScript } from "./common.mjs";
import {
  feedbackRanking,
  nearestWordsRanking,
  questionContext,
  rank as rankWith,
  rarest,
  shippedWeight,
  shippedLift,
  shippedWeights,
  turnIndex,
  vocabularyOf,
  wordVectors,
} from "./nearest-words.mjs";
import { fuse, keyNouns } from "./query-rewrite.mjs";
import { loadSet, TUNING_SET } from "./sets/index.mjs";
import { exchanges, pickQuestions, queryText } from "./sets/shape.mjs";

const K = 5;
let SHIPPED;
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Seeded PRNG (mulberry32) for the bootstrap, so a run repeats exactly. */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Paired bootstrap of mean(a - b) over questions: [2.5%, 97.5%] of 2,000 resamples. */
function bootstrap(a, b) {
  const d = a.map((x, i) => x - b[i]);
  const next = rng(7);
  const means = [];
  for (let r = 0; r < 2000; r++) {
    let s = 0;
    for (let i = 0; i < d.length; i++) s += d[Math.floor(next() * d.length)];
    means.push(s / d.length);
  }
  means.sort((x, y) => x - y);
  return [means[50], means[1949]];
}

/**
 * Ranked turn indexes with an echo discount: an assistant turn's match on a word is multiplied by
 * `assistant` only when the user turn it answers (the turn before it) matches that word too
 * (`per` "word"), or only when that user turn matches any scored word (`per` "turn").
 */
function rankEcho(turns, parts, weights, assistant, per) {
  const sum = new Map();
  const matched = parts.map((p) => new Set(p.tf.map(([i]) => i)));
  const any = new Set(parts.flatMap((p, j) => (weights[j] ? p.tf.map(([i]) => i) : [])));
  parts.forEach((p, j) => {
    if (!weights[j]) return;
    for (const [i, tf] of p.tf) {
      const echo =
        turns[i].role === "assistant" &&
        turns[i - 1]?.role === "user" &&
        (per === "word" ? matched[j] : any).has(i - 1);
      sum.set(i, (sum.get(i) ?? 0) + weights[j] * tf * (echo ? assistant : 1));
    }
  });
  return [...sum].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([i]) => i);
}

/** What unicode61 leaves of an English contraction ("what's": what, s; "don't": don, t). */
const CONTRACTION_PIECES = new Set(
  "s t m re ve ll d don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn can ain".split(" "),
);

export async function benchRecallTune() {
  const dir = process.env.RECALL_DATA_DIR;
  if (!dir) throw new Error("bench:recall-tune needs RECALL_DATA_DIR (docs/recall-sets.md)");
  if (arg("--set") && arg("--set") !== TUNING_SET)
    throw new Error(`bench:recall-tune runs on the tuning set (${TUNING_SET}) only`);
  const core = {
    ...(await importTypeScript("services/cortex/search-index.ts")),
    ...(await importTypeScript("core/speaker-weight.ts")),
    ...(await importTypeScript("core/fts-terms.ts")),
    ...(await importTypeScript("services/cortex/term-stats.ts")),
    ...(await importTypeScript("core/stopwords.ts")),
  };
  const vectors = wordVectors();
  const set = loadSet(dir, TUNING_SET);
  const limit = Number(arg("--limit") ?? set.questions.length);
  const chosen = pickQuestions(set, limit).filter((q) => q.evidence.length);
  const bg = core.shippedBackground();
  const empty = core.termBackground(0, new Map());
  const rewriteOn = process.argv.includes("--rewrite");
  const missesShown = Number(arg("--misses") ?? 0);
  const started = Date.now();
  const samples = [loadavg()[0]];

  /** name -> (question text, parts, rows, turns) -> ranking */
  const idfOf = (p, rows, background) =>
    core.blendedIdf(rows, p.n, { hits: background.hits(p.word), documents: background.documents });
  // The ranking's weight of a word: its blended idf to the shipped power (term-stats.ts IDF_EXPONENT).
  const E = core.IDF_EXPONENT ?? 1;
  // Every lever ranks with the shipped conversation lift unless it says otherwise.
  const LIFT = shippedLift(core);
  const rank = (turns, parts, weights, assistant) => rankWith(turns, parts, weights, assistant, LIFT);
  const wOf = (p, rows, background) => shippedWeight(core, p, rows, background);
  const stemKey = (w) => core.ftsTerms(w).join(" ");
  /** The shipped ranking, but a query word whose `keyOf` an earlier word had weighs nothing. */
  const onePerKey = (keyOf) => (c) => {
    const seen = new Set();
    return rank(
      c.turns,
      c.parts,
      c.parts.map((p) => {
        const k = keyOf(p.word);
        if (seen.has(k)) return 0;
        seen.add(k);
        return wOf(p, c.rows, bg);
      }),
      core.assistantWeight(c.text),
    );
  };
  // The shipped ranking scores only a question's MAX_QUERY_WORDS rarest words (term-stats.ts).
  const CAP = core.MAX_QUERY_WORDS ?? Number.POSITIVE_INFINITY;
  // ...less the tenant's everyday words unless one is the rarest (term-stats.ts COMMON_WORD_SHARE).
  const SHARE = core.COMMON_WORD_SHARE ?? 1;
  const ROWS = core.COMMON_WORD_ROWS ?? 0;
  SHIPPED = `shipped (idf to the power ${E}, the ${CAP} rarest words less those in > ${SHARE * 100}% and > ${ROWS} of the tenant's turns unless the rarest, discount 3 unless asked, shard + background, conversation lift ${LIFT.alpha} of the first ${LIFT.pool})`;
  /** The shipped weights of a question's words, only its `k` rarest nonzero. */
  const rarestWeights = (c, k) =>
    rarest(
      c.parts,
      c.parts.map((p) => wOf(p, c.rows, bg)),
      k,
    );
  /** The shipped weights, but only a question's `k` rarest words scored. */
  const rarestLever = (k) => (c) => rank(c.turns, c.parts, rarestWeights(c, k), core.assistantWeight(c.text));
  /**
   * The shipped weights of the rarest words, less words in more than `share` of the tenant's turns
   * and more than `rows` of them, unless such a word is the question's rarest (ties kept).
   */
  const commonLever = (share, rows) => (c) =>
    rank(c.turns, c.parts, shippedWeights(core, c, bg, { share, rows }), core.assistantWeight(c.text));
  const levers = {
    [SHIPPED]: commonLever(SHARE, ROWS),
    ...Object.fromEntries(
      [
        [3, 5, 0.2],
        [3, 5, 0.5],
        [3, 10, 0.2],
        [5, 10, 0.2],
        [5, 10, 0.5],
        [10, 20, 0.1],
      ].map(([docs, terms, beta]) => [
        `shipped, again with ${terms} words of its first ${docs} hits at ${beta} x`,
        (c) => feedbackRanking(core, c, bg, { docs, terms, beta }),
      ]),
    ),
    ...(vectors
      ? Object.fromEntries(
          [
            [3, 0.6, 0.3],
            [3, 0.6, 0.6],
            [5, 0.5, 0.3],
            [5, 0.6, 0.5],
            [8, 0.5, 0.2],
            [3, 0.7, 1],
          ].map(([k, floor, alpha]) => [
            `shipped + ${k} nearest words (cosine >= ${floor}) at ${alpha} x cosine`,
            (c) => nearestWordsRanking(core, vectors, c, bg, { k, floor, alpha }),
          ]),
        )
      : {}),
    "shipped, every word (no cap, everyday words too)": rarestLever(Number.POSITIVE_INFINITY),
    ...Object.fromEntries(
      ["word", "turn"].flatMap((per) =>
        [3, 6, 1e9].map((d) => [
          `shipped words, echo discount ${d >= 1e9 ? "∞ (echo dropped)" : d} per ${per} unless asked`,
          (c) => {
            const kept = shippedWeights(core, c, bg);
            return rankEcho(c.turns, c.parts, kept, core.asksForAssistantWords(c.text) ? 1 : 1 / d, per);
          },
        ]),
      ),
    ),
    "shipped, a reply left out when the turn it answers ranks above it": (c) => {
      const ranked = rank(c.turns, c.parts, shippedWeights(core, c, bg), core.assistantWeight(c.text));
      const seen = new Set();
      return ranked.filter((i) => {
        seen.add(i);
        return !(c.turns[i].role === "assistant" && c.turns[i - 1]?.role === "user" && seen.has(i - 1));
      });
    },
    "shipped, one hit per exchange (the better of a turn and its reply)": (c) => {
      const ranked = rank(c.turns, c.parts, shippedWeights(core, c, bg), core.assistantWeight(c.text));
      const seen = new Set();
      return ranked.filter((i) => {
        const pair = c.turns[i].role === "assistant" && c.turns[i - 1]?.role === "user" ? i - 1 : i;
        if (seen.has(pair)) return false;
        seen.add(pair);
        return true;
      });
    },
    "shipped, conversation lift not from the turn's own exchange (its reply, or the turn a reply answers)": (c) =>
      rankWith(c.turns, c.parts, shippedWeights(core, c, bg), core.assistantWeight(c.text), {
        ...LIFT,
        partner: false,
      }),
    "shipped, no conversation lift": (c) =>
      rankWith(c.turns, c.parts, shippedWeights(core, c, bg), core.assistantWeight(c.text)),
    ...Object.fromEntries(
      [
        [0.2, 1, 50],
        [0.2, 2, 50],
        [0.2, 4, 50],
        [0.3, 6, 50],
        [0.5, 10, 50],
        [0.2, Number.POSITIVE_INFINITY, 50],
        [0.3, Number.POSITIVE_INFINITY, 50],
        [0.4, Number.POSITIVE_INFINITY, 50],
        [0.6, Number.POSITIVE_INFINITY, 50],
        [0.7, Number.POSITIVE_INFINITY, 50],
        [1, Number.POSITIVE_INFINITY, 50],
        [0.5, Number.POSITIVE_INFINITY, 20],
        [0.5, Number.POSITIVE_INFINITY, 100],
        [0.5, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY],
      ].map(([alpha, window, pool]) => [
        `shipped, conversation lift ${alpha} of the best other ${window === Number.POSITIVE_INFINITY ? "in the session" : `within ${window} turns`} among the first ${pool === Number.POSITIVE_INFINITY ? "all" : pool}`,
        (c) =>
          rankWith(c.turns, c.parts, shippedWeights(core, c, bg), core.assistantWeight(c.text), {
            alpha,
            window,
            pool,
          }),
      ]),
    ),
    "shipped words, no discount": (c) => rank(c.turns, c.parts, shippedWeights(core, c, bg), 1),

    ...Object.fromEntries(
      [1, 1.5, 2, 4].map((d) => [
        `discount ${d} unless asked, shard + background`,
        (c) =>
          rank(
            c.turns,
            c.parts,
            c.parts.map((p) => wOf(p, c.rows, bg)),
            core.asksForAssistantWords(c.text) ? 1 : 1 / d,
          ),
      ]),
    ),
    "discount 3 always": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => wOf(p, c.rows, bg)),
        1 / 3,
      ),
    "discount 3, shard counts only (no background)": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => wOf(p, c.rows, empty)),
        core.assistantWeight(c.text),
      ),
    "no discount, shard counts only": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => wOf(p, c.rows, empty)),
        1,
      ),
    "discount 3, FTS5's own idf": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => core.fts5Idf(c.rows, p.n)),
        core.assistantWeight(c.text),
      ),
    "shipped, one weight per stem (surface forms merged)": onePerKey(stemKey),
    "shipped, one weight per lower-cased word": onePerKey((w) => w.toLowerCase()),
    "shipped, contraction pieces dropped (s, t, m, re, ve, ll, d, don, ...)": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => (CONTRACTION_PIECES.has(p.word.toLowerCase()) ? 0 : wOf(p, c.rows, bg))),
        core.assistantWeight(c.text),
      ),
    ...Object.fromEntries(
      [1, 1.5, 2, 2.5, 3].map((e) => [
        `idf to the power ${e}, discount 3 unless asked, shard + background`,
        (c) =>
          rank(
            c.turns,
            c.parts,
            c.parts.map((p) => idfOf(p, c.rows, bg) ** e),
            core.assistantWeight(c.text),
          ),
      ]),
    ),
    ...Object.fromEntries(
      [1.5, 2].map((d) => [
        `idf squared, discount ${d} unless asked`,
        (c) =>
          rank(
            c.turns,
            c.parts,
            c.parts.map((p) => idfOf(p, c.rows, bg) ** 2),
            core.asksForAssistantWords(c.text) ? 1 : 1 / d,
          ),
      ]),
    ),
    "idf squared, contraction pieces dropped": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => (CONTRACTION_PIECES.has(p.word.toLowerCase()) ? 0 : idfOf(p, c.rows, bg) ** 2)),
        core.assistantWeight(c.text),
      ),
    "idf squared, no discount": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => idfOf(p, c.rows, bg) ** 2),
        1,
      ),
    "idf squared, shard counts only (no background)": (c) =>
      rank(
        c.turns,
        c.parts,
        c.parts.map((p) => idfOf(p, c.rows, empty) ** 2),
        core.assistantWeight(c.text),
      ),
    ...Object.fromEntries([6, 10, 24].map((k) => [`shipped, only the ${k} rarest words`, rarestLever(k)])),
    ...Object.fromEntries(
      [2, 3].map((floor) => [
        `shipped, words with idf < ${floor} dropped`,
        (c) => {
          const weight = c.parts.map((p) => wOf(p, c.rows, bg));
          const kept = c.parts.map((p, j) => (idfOf(p, c.rows, bg) >= floor ? weight[j] : 0));
          return rank(c.turns, c.parts, kept.some(Boolean) ? kept : weight, core.assistantWeight(c.text));
        },
      ]),
    ),
    [`shipped, everyday words scored too (the ${CAP} rarest only)`]: rarestLever(CAP),
    ...Object.fromEntries(
      [
        [0.1, 0],
        [0.2, 0],
        [0.1, 50],
        [0.2, 100],
      ].map(([share, rows]) => [
        `shipped, words in > ${share * 100}% of the tenant's turns${rows ? ` and > ${rows} turns` : ""} dropped unless the rarest`,
        commonLever(share, rows),
      ]),
    ),
    ...Object.fromEntries(
      [0.05, 0.2].map((share) => [
        `shipped, words in > ${share * 100}% of the tenant's turns dropped`,
        (c) => {
          const idf = c.parts.map((p) => (p.n / c.rows > share ? 0 : wOf(p, c.rows, bg)));
          return rank(c.turns, c.parts, idf, core.assistantWeight(c.text));
        },
      ]),
    ),
  };

  const results = new Map(); // lever -> [{recall, hit}] in question order
  const misses = [];
  // The personas in two halves (sorted by name): a lever's gain should show in both, not in one.
  const personas = set.haystacks.map((h) => h.id).sort();
  const half = new Map(personas.map((id, i) => [id, i < personas.length / 2 ? 0 : 1]));
  let current = 0;
  let currentWords = 0;
  const add = (name, ranked, want) => {
    const top = ranked.slice(0, K);
    const found = want.filter((i) => top.includes(i)).length;
    const row = { recall: found / want.length, hit: found ? 1 : 0, half: current, words: currentWords };
    results.set(name, [...(results.get(name) ?? []), row]);
  };
  const byHaystack = new Map(set.haystacks.map((h) => [h.id, h]));
  let skipped = 0;
  const cache = new Map();
  for (const q of chosen) {
    const h = byHaystack.get(q.haystack);
    const cutoff = q.before ?? h.sessions.length;
    const key = `${h.id}:${cutoff}`;
    if (!cache.has(key)) {
      for (const v of cache.values()) v.db.close();
      cache.clear();
      const turns = h.sessions
        .slice(0, cutoff)
        .flatMap((s, session) => exchanges(s.turns).kept.map((t) => ({ ...t, session })));
      const db = turnIndex(turns);
      cache.set(key, { db, turns, vocab: vectors ? vocabularyOf(core, vectors, turns) : null });
    }
    const haystack = cache.get(key);
    const { turns } = haystack;
    current = half.get(h.id);
    const wanted = new Set(q.evidence);
    const want = turns.flatMap((t, i) => (wanted.has(t.id) ? [i] : []));
    if (!want.length) {
      skipped++;
      continue;
    }
    const text = queryText(q.question);
    const context = (t) => questionContext(core, haystack, t);
    const c = context(text);
    currentWords = c.parts.length;
    for (const [name, lever] of Object.entries(levers)) add(name, lever(c), want);
    if (rewriteOn) {
      const key = keyNouns(text);
      const r = key ? context(key) : c;
      // Under the shipped ranking and the other of idf and idf squared.
      const other = `idf to the power ${E === 1 ? 2 : 1}, discount 3 unless asked, shard + background`;
      for (const name of [SHIPPED, other]) {
        const lever = levers[name];
        add(`rewrite: key nouns only; ${name}`, lever(r), want);
        for (const depth of [5, 10, 20])
          add(
            `rewrite: question + key nouns, RRF of the top ${depth}; ${name}`,
            fuse([lever(c), lever(r)], depth),
            want,
          );
      }
    }
    const shippedTop = levers[SHIPPED](c).slice(0, K);
    if (misses.length < missesShown && !want.some((i) => shippedTop.includes(i)))
      misses.push({ q, text, evidence: turns[want[0]], top: turns[shippedTop[0]], c });
    if (samples.length < 1000) samples.push(loadavg()[0]);
  }
  for (const v of cache.values()) v.db.close();

  const baseName = arg("--base") ?? SHIPPED;
  if (!results.has(baseName)) throw new Error(`--base: no lever named "${baseName}"`);
  const base = results.get(baseName);
  console.log(`Δ against: ${baseName}`);
  const n = base.length;
  console.log(
    `${TUNING_SET} (tuning set), in-process: ${n} questions (${skipped} with no evidence left after the alternation), ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  console.log(
    `\n| lever | recall@5 | hit@5 | Δ recall@5 vs shipped | 95% CI (paired bootstrap) | Δ personas ${personas[0]}–${personas[Math.ceil(personas.length / 2) - 1]} | Δ the other ${Math.floor(personas.length / 2)} |`,
  );
  console.log("|---|---|---|---|---|---|---|");
  const halfDelta = (rs, h) => {
    const mine = rs.flatMap((x, i) => (x.half === h ? [x.recall - base[i].recall] : []));
    const d = mean(mine);
    return `${d >= 0 ? "+" : ""}${d.toFixed(3)} (n=${mine.length})`;
  };
  for (const [name, rs] of results) {
    const r = rs.map((x) => x.recall);
    const [lo, hi] = bootstrap(
      r,
      base.map((x) => x.recall),
    );
    const d = mean(r) - mean(base.map((x) => x.recall));
    console.log(
      `| ${name} | ${mean(r).toFixed(3)} | ${mean(rs.map((x) => x.hit)).toFixed(3)} | ${d >= 0 ? "+" : ""}${d.toFixed(3)} | ${lo.toFixed(3)} to ${hi.toFixed(3)} | ${halfDelta(rs, 0)} | ${halfDelta(rs, 1)} |`,
    );
  }
  if (process.argv.includes("--by-length")) {
    // Each lever against the base within buckets of the question's word count (its words the
    // ranking looks up): whether a lever's gain is the long questions' or every question's.
    const buckets = [
      [0, 8],
      [9, 16],
      [17, 32],
    ];
    console.log(`\n| lever | ${buckets.map(([a, b]) => `${a}–${b} words: n, recall@5, Δ (95% CI)`).join(" | ")} |`);
    console.log(`|---|${buckets.map(() => "---").join("|")}|`);
    for (const [name, rs] of results) {
      const cells = buckets.map(([a, b]) => {
        const at = rs.flatMap((x, i) => (x.words >= a && x.words <= b ? [i] : []));
        if (!at.length) return "0, –";
        const mine = at.map((i) => rs[i].recall);
        const theirs = at.map((i) => base[i].recall);
        const [lo, hi] = bootstrap(mine, theirs);
        const d = mean(mine) - mean(theirs);
        return `${at.length}, ${mean(mine).toFixed(3)}, ${d >= 0 ? "+" : ""}${d.toFixed(3)} (${lo.toFixed(3)} to ${hi.toFixed(3)})`;
      });
      console.log(`| ${name} | ${cells.join(" | ")} |`);
    }
  }
  for (const m of misses) {
    const weights = m.c.parts.map((p) => `${p.word}:${idfOf(p, m.c.rows, bg).toFixed(1)}/${p.n}`);
    console.log(
      `\nmiss ${m.q.id} [${m.q.type}] "${m.text.slice(0, 300)}"\n  words (blended idf / turns matched): ${weights.join(" ")}\n  evidence (${m.evidence.role}): "${m.evidence.text.replace(/\s+/g, " ").slice(0, 300)}"\n  top hit (${m.top?.role}): "${m.top?.text.replace(/\s+/g, " ").slice(0, 200)}"`,
    );
  }
  console.log(
    `\nload average (1 min), ${cpus().length} cores: min ${Math.min(...samples).toFixed(1)}, mean ${mean(samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`,
  );
}
