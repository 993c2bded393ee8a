// The ranking levers of the cortex measured side by side over the same turns the cortex holds, on
// an in-process SQLite FTS5 index with the cortex's tokenizer (porter unicode61), its query words
// (services/cortex/search-index.ts queryWords, any matching), its speaker weight and its term statistics
// (services/cortex/term-stats.ts), bundled as they ship. The cortex itself is measured through
// GET /v1/search; this table says which lever moved what, including those that did not help, and
// puts the shipped ranking beside the one shared index the cortex had before its shards
// (sharedIndexRankings).
import { DatabaseSync } from "node:sqlite";
import { importTypeScript } from "./common.mjs";

let core;
/** The project's own query, speaker weight and term statistics, for the levers below. */
export async function loadLeverCore() {
  core ??= {
    ...(await importTypeScript("services/cortex/search-index.ts")),
    ...(await importTypeScript("core/speaker-weight.ts")),
    ...(await importTypeScript("core/stopwords.ts")),
    ...(await importTypeScript("services/cortex/term-stats.ts")),
    ...(await importTypeScript("core/fts-terms.ts")),
  };
  return core;
}

const phrase = (w) => `"${w.replace(/"/g, '""')}"`;
const words = (s) => new Set((s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((x) => !core.STOPWORDS.has(x)));
const rrf = (lists, weights = lists.map(() => 1)) => {
  const s = new Map();
  lists.forEach((l, j) => l.forEach((i, r) => s.set(i, (s.get(i) ?? 0) + weights[j] / (60 + r + 1))));
  return [...s].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map((x) => x[0]);
};

/** Rows {i, s} re-sorted with each assistant turn's score multiplied by `weight` (the cortex's speaker weight; ties by turn). */
const bySpeaker = (turns, rows, weight) =>
  rows
    .map((r) => ({ i: r.i, s: turns[r.i].role === "assistant" ? r.s * weight : r.s }))
    .sort((a, b) => a.s - b.s || a.i - b.i);

/**
 * Rows {i, s} of `table` by the cortex's score: each word's bm25 alone, weighted by term-stats'
 * factor for `background` (a TermBackground; null: weight 1, FTS5's own counts), summed.
 */
function wordByWord(db, table, qWords, background) {
  const rows = db.prepare(`SELECT count(*) AS n FROM ${table}`).get().n;
  const each = qWords.map((w) =>
    db.prepare(`SELECT rowid - 1 AS i, bm25(${table}) AS s FROM ${table} WHERE ${table} MATCH ?`).all(phrase(w)),
  );
  const weights = background
    ? core.phraseWeights(qWords, { rows, hits: each.map((r) => r.length) }, background)
    : qWords.map(() => 1);
  const sum = new Map();
  each.forEach((hits, j) => hits.forEach((h) => sum.set(h.i, (sum.get(h.i) ?? 0) + weights[j] * h.s)));
  return [...sum].map(([i, s]) => ({ i, s })).sort((a, b) => a.s - b.s || a.i - b.i);
}

/**
 * The cortex before its shards: one FTS5 index over every question's turns (every tenant's, as the
 * shared D1 table held them), each question ranked within its own turns. Returns question -> ranking.
 */
export function sharedIndexRankings(questions) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE shared USING fts5(body, tokenize='porter unicode61')`);
  const insert = db.prepare(`INSERT INTO shared (rowid, body) VALUES (?, ?)`);
  const first = new Map();
  let id = 0;
  db.exec("BEGIN");
  for (const q of questions) {
    first.set(q, id);
    for (const t of q.kept) insert.run(++id, t.text);
  }
  db.exec("COMMIT");
  const out = new Map();
  for (const q of questions) {
    const match = core.toFtsQuery(q.question, "or");
    const from = first.get(q);
    const weight = core.assistantWeight(q.question);
    const rows = match
      ? db
          .prepare(
            `SELECT rowid - 1 - ? AS i, bm25(shared) AS s FROM shared WHERE shared MATCH ? AND rowid > ? AND rowid <= ? ORDER BY s LIMIT 300`,
          )
          .all(from, match, from, from + q.kept.length)
      : [];
    out.set(
      q,
      bySpeaker(q.kept, rows, weight).map((r) => r.i),
    );
  }
  db.close();
  return out;
}

/** One question's turns ranked with the shard's counts alone and with `background`'s added (the shipped ranking's two halves). */
export function shardRankings(turns, question, background) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE turn USING fts5(body, tokenize='porter unicode61')`);
  const insert = db.prepare(`INSERT INTO turn (rowid, body) VALUES (?, ?)`);
  db.exec("BEGIN");
  turns.forEach((t, i) => insert.run(i + 1, t.text));
  db.exec("COMMIT");
  const qWords = core.queryWords(question) ?? [];
  const weight = core.assistantWeight(question);
  const speaker = (rows) => bySpeaker(turns, rows, weight).map((r) => r.i);
  const out = {
    shardOnly: speaker(wordByWord(db, "turn", qWords, null)),
    blended: speaker(wordByWord(db, "turn", qWords, background)),
  };
  db.close();
  return out;
}

/** Lever name -> ranked turn indexes (best first) for one question over `turns` ({session, role, text}). Needs loadLeverCore first. */
export function leverRankings(turns, question, dates) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE turn USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE user_only USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE exchange USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE by_role USING fts5(user, assistant, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE dated USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE dated_words USING fts5(body, tokenize='porter unicode61');`);
  const ins = (t, cols) =>
    db.prepare(
      `INSERT INTO ${t} (rowid, ${cols}) VALUES (?, ${cols
        .split(",")
        .map(() => "?")
        .join(", ")})`,
    );
  const [it, iu, ie, ir, id, iw] = [
    ins("turn", "body"),
    ins("user_only", "body"),
    ins("exchange", "body"),
    ins("by_role", "user, assistant"),
    ins("dated", "body"),
    ins("dated_words", "body"),
  ];
  db.exec("BEGIN");
  turns.forEach((t, i) => {
    it.run(i + 1, t.text);
    if (t.role === "user") iu.run(i + 1, t.text);
    // An exchange window: a user turn and its answer indexed together, under each of the two.
    ie.run(
      i + 1,
      t.role === "user" ? `${t.text}\n${turns[i + 1]?.text ?? ""}` : `${turns[i - 1]?.text ?? ""}\n${t.text}`,
    );
    ir.run(i + 1, t.role === "user" ? t.text : "", t.role === "assistant" ? t.text : "");
    id.run(i + 1, `${dates?.[t.session] ?? ""} ${t.text}`);
    iw.run(i + 1, `${dateInWords(dates?.[t.session])} ${t.text}`);
  });
  db.exec("COMMIT");
  const qWords = core.queryWords(question) ?? [];
  const match = qWords.map(phrase).join(" OR ");
  const rank = (table, score = `bm25(${table})`) =>
    match
      ? db
          .prepare(
            `SELECT rowid - 1 AS i, ${score} AS s FROM ${table} WHERE ${table} MATCH ? ORDER BY s, rowid LIMIT 300`,
          )
          .all(match)
      : [];
  const ids = (rows) => rows.map((r) => r.i);
  const plain = rank("turn");
  const discounted = (factor, rows = plain) => bySpeaker(turns, rows, 1 / factor);
  const weight = core.assistantWeight(question);
  const speaker = (rows) => bySpeaker(turns, rows, weight);
  const shardOnly = speaker(plain);
  const shipped = speaker(wordByWord(db, "turn", qWords, core.shippedBackground()));
  const out = {
    "FTS5 subject terms, any (round one)": ids(plain),
    "+ neighbour re-rank, share 0.5 (round one)": neighbour(turns, plain, 0.5),
    "+ near-duplicate collapse (overlap 0.7)": collapse(turns, ids(plain), 0.7),
    "+ session date in the text": ids(rank("dated")),
    "view: user turns only": ids(rank("user_only")),
    "view: exchange windows": ids(rank("exchange")),
    "RRF turn + user-only": rrf([ids(plain), ids(rank("user_only"))]),
    "RRF turn + windows": rrf([ids(plain), ids(rank("exchange"))]),
    "RRF turn + user-only + windows": rrf([ids(plain), ids(rank("user_only")), ids(rank("exchange"))]),
    "column weights user 4 : assistant 1": ids(rank("by_role", "bm25(by_role, 4, 1)")),
    "assistant discount 2": ids(discounted(2)),
    "assistant discount 3": ids(discounted(3)),
    "assistant discount 4": ids(discounted(4)),
    "assistant discount 8": ids(discounted(8)),
    "discount 3 unless asked, shard counts only": ids(shardOnly),
    "discount 3 unless asked, shard + background counts (shipped)": ids(shipped),
    "shipped, word by word with weight 1 (= shard counts only)": ids(speaker(wordByWord(db, "turn", qWords, null))),
    "shipped + near-duplicate collapse": collapse(turns, ids(shipped), 0.7),
    "shipped + neighbour share 0.25": neighbour(turns, shipped, 0.25),
    "shipped RRF windows (2:1)": rrf([ids(shipped), ids(rank("exchange"))], [2, 1]),
    "shipped + session date in words": ids(speaker(wordByWord(db, "dated_words", qWords, core.shippedBackground()))),
  };
  db.close();
  return out;
}

/** LongMemEval's "2023/05/20 (Sat) 02:21" as a person would write it: "Saturday May 20 2023". */
function dateInWords(date) {
  const m = /^(\d{4})\/(\d{2})\/(\d{2})/.exec(date ?? "");
  if (!m) return "";
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d
    .toLocaleDateString("en-US", { weekday: "long", month: "long", day: "numeric", year: "numeric", timeZone: "UTC" })
    .replace(/,/g, "");
}

/** Round one's re-rank: a turn gains a share of its adjacent turns' scores (top 50). */
function neighbour(turns, rows, share) {
  const pool = rows.slice(0, 50);
  const rel = new Map(pool.map((r) => [r.i, -r.s]));
  const near = (i) =>
    [i - 1, i + 1].reduce((n, j) => n + (turns[j]?.session === turns[i].session ? (rel.get(j) ?? 0) : 0), 0);
  return [
    ...pool
      .map((r, p) => ({ i: r.i, p, s: -r.s + share * near(r.i) }))
      .sort((a, b) => b.s - a.s || a.p - b.p)
      .map((x) => x.i),
    ...rows.slice(50).map((r) => r.i),
  ];
}

/** Drops a hit whose adjacent turn already ranks above it and shares most of its subject words. */
function collapse(turns, ranked, overlap) {
  const placed = new Set();
  return ranked.filter((i) => {
    const dup = [i - 1, i + 1].some((j) => {
      if (!placed.has(j) || turns[j].session !== turns[i].session) return false;
      const [a, b] = [words(turns[i].text), words(turns[j].text)];
      let both = 0;
      for (const w of a) if (b.has(w)) both++;
      return both / Math.max(1, Math.min(a.size, b.size)) >= overlap;
    });
    placed.add(i);
    return !dup;
  });
}
