// LongMemEval (Wu et al., ICLR 2025; MIT licence): the _s release (longmemeval_s*.json, or one file
// per question) under RECALL_DATA_DIR/longmemeval. Each question has its own haystack of ~50
// user-assistant sessions; evidence turns are those marked has_answer. Abstention questions (_abs)
// and haystacks under 10 sessions (the oracle file) are left out, as bench/longmemeval.mjs does.
import { loadLongMemEval } from "../longmemeval.mjs";

export function loadSet(dir) {
  const questions = loadLongMemEval(dir, Number.MAX_SAFE_INTEGER);
  return {
    name: "longmemeval",
    notes: [],
    haystacks: questions.map((q) => ({
      id: q.id,
      sessions: q.sessionIds.map((id, s) => ({
        id,
        date: q.dates?.[s] ?? "",
        turns: q.turns
          .filter((t) => t.session === s)
          .map((t) => ({ id: `${s}:${t.turn}`, role: t.role, text: t.text, date: q.dates?.[s] ?? "" })),
      })),
    })),
    questions: questions.map((q) => ({
      id: q.id,
      haystack: q.id,
      type: q.type,
      question: q.question,
      evidence: q.turns.filter((t) => t.evidence).map((t) => `${t.session}:${t.turn}`),
    })),
  };
}
