// How many chat turns hold each FTS5 term (porter unicode61) over LongMemEval's haystack sessions,
// leaving out every session of the held-out questions: the shipped background's source
// (scripts/background-terms.mjs) and each fold's in bench:recall-folds. Sessions are deduplicated
// by id; each non-empty turn is one document, as a message is one document in the cortex.
import { DatabaseSync } from "node:sqlite";

/** {documents, sessions, counts: term -> turns holding it (those held by at least minDf; letters and digits only)}. */
export function backgroundCounts(questions, heldOutQuestions, minDf) {
  const heldOut = new Set(heldOutQuestions.flatMap((q) => q.sessionIds));
  const sessions = new Map();
  for (const q of questions)
    q.sessionIds.forEach((id, s) => {
      if (!heldOut.has(id) && !sessions.has(id))
        sessions.set(
          id,
          q.turns.filter((t) => t.session === s && t.text.trim()),
        );
    });
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE turns USING fts5(body, tokenize = 'porter unicode61');
           CREATE VIRTUAL TABLE terms USING fts5vocab(turns, 'row');`);
  const insert = db.prepare("INSERT INTO turns (body) VALUES (?)");
  let documents = 0;
  db.exec("BEGIN");
  for (const turns of sessions.values())
    for (const t of turns) {
      insert.run(t.text);
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
  return {
    documents,
    sessions: sessions.size,
    heldOutSessions: heldOut.size,
    allTerms: all,
    counts: new Map(rows.map((r) => [r.term, r.doc])),
  };
}
