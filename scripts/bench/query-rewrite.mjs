// The query rewrite the recall doctrine (memory_search's description) asks of the model, done by a
// fixed rule because the offline model cannot rewrite. The doctrine: "put the subject words the
// original would contain, not the question ... search again with other words if the first hits
// miss". The rule standing in for the model:
//   1. search the question as asked;
//   2. search its key words: the question without the words that frame it as a question about
//      time, count or recency (FRAME below), which the original turn does not contain;
//   3. read the top 5 of the two rankings fused by reciprocal rank (k = 60).
// What it cannot stand in for: "add the likely words of the answer and synonyms" needs a model.
const FRAME = new Set(
  (
    "how many much long often old when where which what who whom whose why did does do was were is are have has had " +
    "ago days day weeks week months month years year times time first last ever currently total number recently " +
    "since before after previous earlier mentioned told tell remind remember said say talked discussed conversation chat i me my"
  ).split(" "),
);

/** The key-words search of step 2, or null when it would be the question again or empty. */
export function keyWords(question) {
  const words = question.match(/[\p{L}\p{N}_]+(?:[-.:/@#][\p{L}\p{N}_]+)*/gu) ?? [];
  const kept = words.filter((w) => !FRAME.has(w.toLowerCase()));
  return kept.length && kept.length < words.length ? kept.join(" ") : null;
}
