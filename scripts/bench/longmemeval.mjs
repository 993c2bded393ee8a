// LongMemEval (Wu et al., ICLR 2025, MIT) read from a folder: either the release files
// (longmemeval_s*.json, an array of questions) or one JSON file per question. Only questions with a
// long haystack (the _s variant, not the oracle) and labelled evidence turns are kept.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const MIN_SESSIONS = 10;

/** RECALL_DATA_DIR, the folder holding LongMemEval; without one, `script` says what it needs and exits 2 (nothing is downloaded). */
export function recallDataDir(script) {
  const dir = process.env.RECALL_DATA_DIR;
  if (dir && existsSync(dir)) return dir;
  console.log(
    `${script} needs RECALL_DATA_DIR: a folder with LongMemEval's JSON (longmemeval_s*.json or one file per question)`,
  );
  process.exit(2);
}

function* jsonFiles(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* jsonFiles(p);
    else if (name.endsWith(".json")) yield p;
  }
}

/** Questions sorted by id (only those of `type` when given), each with its turns flattened: {session, turn, role, text, evidence}. */
export function loadLongMemEval(dir, limit, type) {
  const byId = new Map();
  for (const file of jsonFiles(dir)) {
    let data;
    try {
      data = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      console.log(`skipped ${file}: not valid JSON`);
      continue;
    }
    for (const q of Array.isArray(data) ? data : [data]) {
      if (!q?.haystack_sessions || q.haystack_sessions.length < MIN_SESSIONS || String(q.question_id).endsWith("_abs"))
        continue;
      if (type && q.question_type !== type) continue;
      const turns = q.haystack_sessions.flatMap((s, session) =>
        s.map((t, turn) => ({ session, turn, role: t.role, text: String(t.content ?? ""), evidence: !!t.has_answer })),
      );
      if (!turns.some((t) => t.evidence)) continue;
      byId.set(q.question_id, {
        id: q.question_id,
        type: q.question_type,
        question: q.question,
        dates: q.haystack_dates,
        sessionIds: q.haystack_session_ids,
        answerSessions: new Set(q.answer_session_ids),
        turns,
      });
    }
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit);
}

/**
 * A session as whole exchanges (user then assistant), as the import route takes them; a turn that
 * breaks the alternation is left out and counted, so a lost evidence turn shows in the figures.
 */
export function exchanges(turns) {
  const kept = [];
  const dropped = [];
  for (let i = 0; i < turns.length; i++) {
    const [u, a] = [turns[i], turns[i + 1]];
    if (u.role === "user" && a?.role === "assistant" && u.text.trim() && a.text.trim()) {
      kept.push(u, a);
      i++;
    } else dropped.push(u);
  }
  return { kept, dropped };
}
