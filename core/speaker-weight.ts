// Whose words a search is after. A person searching their history mostly looks for what they said
// ("how long is my commute?"); the assistant's replies restate and elaborate those words at length,
// so on plain BM25 a reply often outranks the turn it answers and pushes other evidence out of the
// top. The assistant's matches are therefore discounted, unless the query asks for the assistant's
// own words ("you suggested", "our previous chat"). Measured on LongMemEval (bench:recall-public).
// Pure: tested directly.

/** An assistant message's BM25 score is divided by this (3: best of 2, 2.5, 3, 4, 6, 8, 12 measured). */
export const ASSISTANT_DISCOUNT = 3;

const ASKS_FOR_ASSISTANT =
  /\byou (?:mentioned|said|told|suggested|recommended|provided|gave|listed|made|shared|explained|described|wrote|offered|named|included|proposed|came up|put)\b|\b(?:our|the|that) (?:previous|earlier|last) (?:conversation|chat|discussion|talk)\b|\bwe (?:discussed|talked|spoke|chatted)\b|\byour (?:answer|list|suggestion|recommendation|response|advice)\b/i;

/** True when the query is about what the assistant said rather than what the person said. */
export function asksForAssistantWords(query: string): boolean {
  return ASKS_FOR_ASSISTANT.test(query);
}

/** The factor an assistant message's score is multiplied by for this query (1 = no discount). */
export function assistantWeight(query: string, said?: "user" | "assistant"): number {
  if (said === "assistant" || (said === undefined && asksForAssistantWords(query))) return 1;
  return 1 / ASSISTANT_DISCOUNT;
}
