// bench:recall-folds — does a background counted over LongMemEval's own sessions help on questions
// it leaves out? (The shipped background is no longer LongMemEval's but general dialogue corpora',
// docs/recall-sets.md.) In-process only (no stack): every usable LongMemEval question, in folds of
// 100 by id; each fold is ranked with a background counted from every session outside that fold
// (bench/background-counts.mjs, the shipped file's cut-off), so no question is ranked with counts
// of its own turns. Side by side per fold:
// each question's shard counts alone, one shared index over the fold's questions (the cortex
// before its shards), and shard + background (the shipped ranking). recall@5 as bench:recall-public
// counts it, over the turns the import route keeps.
//   RECALL_DATA_DIR  LongMemEval (required)
//   --fold-size N    questions per fold (default 100)
import { importTypeScript } from "./common.mjs";
import { backgroundCounts } from "./background-counts.mjs";
import { exchanges, loadLongMemEval, recallDataDir } from "./longmemeval.mjs";
import { loadLeverCore, shardRankings, sharedIndexRankings } from "./recall-levers.mjs";

const K = 5;

function recall(ranked, q) {
  const top = ranked.slice(0, K).map((i) => q.kept[i]);
  const evidence = q.kept.filter((t) => t.evidence);
  return evidence.length ? evidence.filter((t) => top.includes(t)).length / evidence.length : 0;
}

export async function benchRecallFolds() {
  const dir = recallDataDir("bench:recall-folds");
  const flag = process.argv.indexOf("--fold-size");
  const size = Number(flag >= 0 ? process.argv[flag + 1] : 100);
  if (!Number.isInteger(size) || size < 1) throw new Error("--fold-size: a positive whole number");
  const core = await loadLeverCore();
  const { BACKGROUND_MIN_DOCUMENT_FREQUENCY: minDf } = await importTypeScript("services/cortex/background-terms.ts");
  const questions = loadLongMemEval(dir, Number.MAX_SAFE_INTEGER);
  for (const q of questions)
    q.kept = q.sessionIds.flatMap((_, s) => exchanges(q.turns.filter((t) => t.session === s)).kept);
  console.log(
    `LongMemEval: ${questions.length} questions from ${dir}, folds of ${size}; background cut-off ${minDf} turns`,
  );
  const names = [
    "shard counts only",
    "one shared index (before the shards)",
    "shard + held-out LongMemEval background",
  ];
  const totals = names.map(() => []);
  for (let from = 0; from < questions.length; from += size) {
    const fold = questions.slice(from, from + size);
    const bg = backgroundCounts(questions, fold, minDf);
    const background = core.termBackground(bg.documents, bg.counts);
    const shared = sharedIndexRankings(fold);
    const scores = names.map(() => []);
    for (const q of fold) {
      const { shardOnly, blended } = shardRankings(q.kept, q.question, background);
      [shardOnly, shared.get(q), blended].forEach((ranked, j) => scores[j].push(recall(ranked, q)));
    }
    scores.forEach((s, j) => totals[j].push(...s));
    const mean = (xs) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3);
    console.log(
      `fold ${from + 1}-${from + fold.length} (background: ${bg.documents} turns, ${bg.counts.size} terms): ${names.map((n, j) => `${n} ${mean(scores[j])}`).join(" | ")}`,
    );
  }
  const mean = (xs) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3);
  console.log(`\nall ${questions.length} questions, recall@5:`);
  names.forEach((n, j) => console.log(`  ${n.padEnd(40)} ${mean(totals[j])}`));
}
