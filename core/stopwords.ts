// Function words of English questions ("what did I say about my ..."). A search that has to match
// them, or ranks on them, is steered by the phrasing instead of the subject. Identifiers and
// numbers are never stopwords, so exact look-ups are untouched.
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both but by can " +
    "could did do does doing down during each few for from further had has have having he her here hers herself him himself his how " +
    "i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out " +
    "over own same she should so some such than that the their theirs them themselves then there these they this those through to " +
    "too under until up very was we were what when where which while who whom why will with would you your yours yourself " +
    "yourselves tell remind recall remember previous earlier mentioned said say talked discussed conversation chat"
  ).split(" "),
);

/** The terms that carry the subject; all of them when every term is a function word. */
export function contentTerms(terms: readonly string[]): string[] {
  const kept = terms.filter((t) => !STOPWORDS.has(t.toLowerCase()));
  return kept.length ? kept : [...terms];
}
