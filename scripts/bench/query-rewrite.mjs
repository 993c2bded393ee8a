// The query rewrite the recall doctrine (memory_search's description, agent/tools/memory-search.ts)
// asks of the model, done by a fixed rule: the benches have no model. The doctrine: "put the
// subject words the original would contain, not the question ... search again with other words if
// the first hits miss". The rule sees only what a model would see, the question, and keeps its key
// nouns: every word but question words, auxiliaries, pronouns, determiners and the other function
// words (core/stopwords.ts's list and FRAME below), light verbs and fillers (what a question is
// made of, never its subject), and words the question uses to point at the past ("last time",
// "mentioned"), which the original turn does not contain. Names, numbers and identifiers stay.
// `--rewrite` in bench:recall-public ranks it two ways: the key nouns alone, and the question and
// the key nouns searched both, the top 5 of each fused by reciprocal rank (k = 60), as the doctrine's "search
// again" does. What it cannot stand in for: "add the likely words of the answer and synonyms".
const FRAME = new Set(
  // question words, auxiliaries, pronouns, determiners, conjunctions, prepositions
  (
    "a about above after again against all also am an and any anything are as at be because been before being below " +
    "between both but by can could did do does doing done down during each either else even every everything few for " +
    "from further get gets getting got had has have having he her here hers herself him himself his how however i if in " +
    "into is it its itself just let lets me might mine more most much must my myself no nor not now of off on once only " +
    "or other our ours ourselves out over own same shall she should so some something such than that the their theirs " +
    "them themselves then there these they this those though through to too under until up us very was we were what " +
    "whatever when where whether which while who whom whose why will with would yet you your yours yourself " +
    // words that point at the conversation or the past rather than its subject
    "ago already before earlier ever first last later mentioned previous previously recall recently remember remind " +
    "said say told tell talked discussed conversation chat time times since " +
    // light verbs, fillers and politeness: what a request is made of, never its subject
    "ok okay yes yeah hey hi hello please thanks thank sure really actually basically maybe like well right " +
    "need needs want wants think know go going make makes making give take see look looking help use used using " +
    "way thing things lot kind sort bit"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}_]+(?:['’][\p{L}]+)?(?:[-.:/@#][\p{L}\p{N}_]+)*/gu;

/** The question's key nouns, in order, each once (case folded); null when nothing but function words. */
export function keyNouns(question) {
  const seen = new Set();
  const kept = [];
  for (const raw of question.match(WORD) ?? []) {
    const word = raw.replace(/['’][\p{L}]+$/u, "");
    const lower = word.toLowerCase();
    if (FRAME.has(lower) || seen.has(lower) || (lower.length < 2 && !/\d/.test(lower))) continue;
    seen.add(lower);
    kept.push(word);
  }
  return kept.length ? kept.join(" ") : null;
}

/**
 * Reciprocal-rank fusion (k = 60) of rankings, each read to `depth`: 5, what a model reads of one
 * memory_search (its default limit); 5, 10 and 20 were compared on the tuning set, 5 was best.
 */
export function fuse(lists, depth = 5) {
  const score = new Map();
  for (const list of lists)
    list.slice(0, depth).forEach((item, r) => score.set(item, (score.get(item) ?? 0) + 1 / (60 + r + 1)));
  return [...score].sort((a, b) => b[1] - a[1]).map(([item]) => item);
}
