// How many documents hold each FTS5 term (porter unicode61): the counting behind the shipped
// background (scripts/background-terms.mjs, over a general chat corpus) and each fold's in
// bench:recall-folds (over LongMemEval's haystack sessions, leaving out the fold's own). Each
// non-empty turn is one document, as a message is one document in the cortex.
import { DatabaseSync } from "node:sqlite";

/** {documents, allTerms, counts: term -> documents holding it (those held by at least minDf; letters and digits only)}. */
export function termCounts(texts, minDf) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE turns USING fts5(body, tokenize = 'porter unicode61');
           CREATE VIRTUAL TABLE terms USING fts5vocab(turns, 'row');`);
  const insert = db.prepare("INSERT INTO turns (body) VALUES (?)");
  let documents = 0;
  db.exec("BEGIN");
  for (const text of texts)
    if (text.trim()) {
      insert.run(text);
      documents++;
    }
  db.exec("COMMIT");
  // A query's terms are letters and digits only (services/cortex/search-index.ts queryWords), so a term holding
  // anything else (SQLite's tokenizer keeps some symbols inside words) can never be looked up.
  const rows = db
    .prepare("SELECT term, doc FROM terms WHERE doc >= ? ORDER BY term")
    .all(minDf)
    .filter((r) => /^[\p{L}\p{N}]+$/u.test(r.term));
  const all = db.prepare("SELECT count(*) AS n FROM terms").get().n;
  db.close();
  return { documents, allTerms: all, counts: new Map(rows.map((r) => [r.term, r.doc])) };
}

/** termCounts over LongMemEval's haystack sessions (deduplicated by id), leaving out every session of `heldOutQuestions`. */
export function backgroundCounts(questions, heldOutQuestions, minDf) {
  const heldOut = new Set(heldOutQuestions.flatMap((q) => q.sessionIds));
  const sessions = new Map();
  for (const q of questions)
    q.sessionIds.forEach((id, s) => {
      if (!heldOut.has(id) && !sessions.has(id))
        sessions.set(
          id,
          q.turns.filter((t) => t.session === s),
        );
    });
  const texts = [...sessions.values()].flatMap((turns) => turns.map((t) => t.text));
  return { ...termCounts(texts, minDf), sessions: sessions.size, heldOutSessions: heldOut.size };
}
