// Writes RealMem (RECALL_DATA_DIR/realmem, docs/recall-sets.md) in LongMemEval's one-file-per-question
// layout, so the LongMemEval benches (bench:ranking-cost) run where LongMemEval is not on the machine,
// in any checkout, old ones included: node scripts/bench/realmem-as-longmemeval.mjs <out folder>.
// Each persona's whole history is the haystack of its first four questions (ids q0-<persona> ..
// q3-<persona>, so the first ten sorted are one per persona); evidence turns carry has_answer.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSet } from "./sets/index.mjs";

const dir = process.env.RECALL_DATA_DIR;
const out = process.argv[2];
if (!dir || !out) {
  console.log("usage: RECALL_DATA_DIR=<sets> node scripts/bench/realmem-as-longmemeval.mjs <out folder>");
  process.exit(2);
}
const set = loadSet(dir, "realmem");
mkdirSync(out, { recursive: true });
let written = 0;
for (const h of set.haystacks) {
  const asked = set.questions.filter((q) => q.haystack === h.id).slice(0, 4);
  asked.forEach((q, k) => {
    const evidence = new Set(q.evidence);
    const file = {
      question_id: `q${k}-${h.id}`,
      question_type: q.type,
      question: q.question,
      haystack_session_ids: h.sessions.map((s) => s.id),
      haystack_dates: h.sessions.map((s) => s.date),
      answer_session_ids: [],
      haystack_sessions: h.sessions.map((s) =>
        s.turns.map((t) => ({ role: t.role, content: t.text, has_answer: evidence.has(t.id) })),
      ),
    };
    writeFileSync(join(out, `${file.question_id}.json`), JSON.stringify(file));
    written++;
  });
}
console.log(`${written} questions over ${set.haystacks.length} RealMem personas written to ${out}`);
