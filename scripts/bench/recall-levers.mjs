// The ranking levers of the cortex measured side by side over the same turns the cortex holds, on
// an in-process SQLite FTS5 index with the cortex's tokenizer (porter unicode61) and its query
// (subject terms, any matching). The cortex itself is measured through GET /v1/search; this table
// says which lever moved what, including those that did not help.
import { DatabaseSync } from "node:sqlite";

const STOPWORDS = new Set(
  ("a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how " +
    "i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to " +
    "too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves tell remind recall remember previous earlier mentioned said say talked discussed conversation chat").split(" "),
);
// core/speaker-weight.ts's test, repeated here (the bench runs in plain Node).
const ASKS_FOR_ASSISTANT =
  /\byou (?:mentioned|said|told|suggested|recommended|provided|gave|listed|made|shared|explained|described|wrote|offered|named|included|proposed|came up|put)\b|\b(?:our|the|that) (?:previous|earlier|last) (?:conversation|chat|discussion|talk)\b|\bwe (?:discussed|talked|spoke|chatted)\b|\byour (?:answer|list|suggestion|recommendation|response|advice)\b/i;

function ftsQuery(q) {
  const all = [...new Set(q.match(/[\p{L}\p{N}_]+(?:[-.:/@#][\p{L}\p{N}_]+)*/gu) ?? [])];
  const kept = all.filter((t) => !STOPWORDS.has(t.toLowerCase()));
  return (kept.length ? kept : all).map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

const words = (s) => new Set((s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((x) => !STOPWORDS.has(x)));
const rrf = (lists, weights = lists.map(() => 1)) => {
  const s = new Map();
  lists.forEach((l, j) => l.forEach((i, r) => s.set(i, (s.get(i) ?? 0) + weights[j] / (60 + r + 1))));
  return [...s].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map((x) => x[0]);
};

/** Lever name -> ranked turn indexes (best first) for one question over `turns` ({session, role, text}). */
export function leverRankings(turns, question, dates) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE turn USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE user_only USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE exchange USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE by_role USING fts5(user, assistant, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE dated USING fts5(body, tokenize='porter unicode61');
           CREATE VIRTUAL TABLE dated_words USING fts5(body, tokenize='porter unicode61');`);
  const ins = (t, cols) => db.prepare(`INSERT INTO ${t} (rowid, ${cols}) VALUES (?, ${cols.split(",").map(() => "?").join(", ")})`);
  const [it, iu, ie, ir, id, iw] = [ins("turn", "body"), ins("user_only", "body"), ins("exchange", "body"), ins("by_role", "user, assistant"), ins("dated", "body"), ins("dated_words", "body")];
  db.exec("BEGIN");
  turns.forEach((t, i) => {
    it.run(i + 1, t.text);
    if (t.role === "user") iu.run(i + 1, t.text);
    // An exchange window: a user turn and its answer indexed together, under each of the two.
    ie.run(i + 1, t.role === "user" ? `${t.text}\n${turns[i + 1]?.text ?? ""}` : `${turns[i - 1]?.text ?? ""}\n${t.text}`);
    ir.run(i + 1, t.role === "user" ? t.text : "", t.role === "assistant" ? t.text : "");
    id.run(i + 1, `${dates?.[t.session] ?? ""} ${t.text}`);
    iw.run(i + 1, `${dateInWords(dates?.[t.session])} ${t.text}`);
  });
  db.exec("COMMIT");
  const match = ftsQuery(question);
  const rank = (table, score = `bm25(${table})`) =>
    db.prepare(`SELECT rowid - 1 AS i, ${score} AS s FROM ${table} WHERE ${table} MATCH ? ORDER BY s, rowid LIMIT 300`).all(match);
  const ids = (rows) => rows.map((r) => r.i);
  const plain = rank("turn");
  const discounted = (factor, rows = plain) => [...rows].map((r) => ({ i: r.i, s: turns[r.i].role === "assistant" ? r.s / factor : r.s })).sort((a, b) => a.s - b.s || a.i - b.i);
  const asks = ASKS_FOR_ASSISTANT.test(question);
  const shipped = discounted(asks ? 1 : 3);
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
    "discount 3 unless asked (shipped)": ids(shipped),
    "shipped + near-duplicate collapse": collapse(turns, ids(shipped), 0.7),
    "shipped + neighbour share 0.25": neighbour(turns, shipped, 0.25),
    "shipped RRF windows (2:1)": rrf([ids(shipped), ids(rank("exchange"))], [2, 1]),
    "shipped + session date in words": ids(discounted(asks ? 1 : 3, rank("dated_words"))),
  };
  db.close();
  return out;
}

/** LongMemEval's "2023/05/20 (Sat) 02:21" as a person would write it: "Saturday May 20 2023". */
function dateInWords(date) {
  const m = /^(\d{4})\/(\d{2})\/(\d{2})/.exec(date ?? "");
  if (!m) return "";
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.toLocaleDateString("en-US", { weekday: "long", month: "long", day: "numeric", year: "numeric", timeZone: "UTC" }).replace(/,/g, "");
}

/** Round one's re-rank: a turn gains a share of its adjacent turns' scores (top 50). */
function neighbour(turns, rows, share) {
  const pool = rows.slice(0, 50);
  const rel = new Map(pool.map((r) => [r.i, -r.s]));
  const near = (i) => [i - 1, i + 1].reduce((n, j) => n + (turns[j]?.session === turns[i].session ? (rel.get(j) ?? 0) : 0), 0);
  return [...pool.map((r, p) => ({ i: r.i, p, s: -r.s + share * near(r.i) })).sort((a, b) => b.s - a.s || a.p - b.p).map((x) => x.i), ...rows.slice(50).map((r) => r.i)];
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
