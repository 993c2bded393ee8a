// What a model call costs, from the catalog's prices (USD per million tokens): input, output
// (thinking included: it is billed as output), cache writes (the 5-minute lifetime this platform
// asks for) and cache reads, plus web searches at $10 per 1,000 (pricing page). A model the
// catalog does not price (one only the Models API knows) costs nothing here and says so.
import type { ModelEntry } from "./models/catalog";
import type { Usage } from "./types";

/** Web search is billed per use: $10 per 1,000 searches; web fetch has no charge beyond its tokens. */
export const WEB_SEARCH_USD = 10 / 1_000;

/** The call's cost in USD, or null when the model has no prices in the catalog. */
export function costOf(usage: Usage, entry: Pick<ModelEntry, "prices"> | null): number | null {
  const p = entry?.prices;
  if (!p) return null;
  const prompt = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
  const rate = p.longPrompt && prompt > p.longPrompt.overPromptTokens ? p.longPrompt.multiplier : 1;
  const usd =
    (rate *
      (usage.input_tokens * p.input +
        usage.output_tokens * p.output +
        usage.cache_creation_input_tokens * p.cacheWrite5m +
        usage.cache_read_input_tokens * p.cacheRead)) /
      1_000_000 +
    (usage.web_search_requests ?? 0) * WEB_SEARCH_USD;
  return roundUsd(usd);
}

/** Micro-dollar precision: sums of many calls stay exact enough and print cleanly. */
export const roundUsd = (usd: number): number => Math.round(usd * 1_000_000) / 1_000_000;

/**
 * A refusal before any output is not billed in these categories (models/sonnet-5-5/whats-new,
 * "Refusals, fallback, and billing"); bio, frontier_llm and reasoning_extraction are.
 */
export const UNBILLED_REFUSALS: readonly (string | null)[] = ["cyber", "general_harms", null];

/** A reply the API does not bill: a refusal before any output, in one of UNBILLED_REFUSALS' categories. */
export function isUnbilledRefusal(reply: {
  stop_reason: string | null;
  content: readonly unknown[];
  stop_details?: { category?: string | null } | null;
}): boolean {
  return (
    reply.stop_reason === "refusal" &&
    !reply.content.length &&
    UNBILLED_REFUSALS.includes(reply.stop_details?.category ?? null)
  );
}

/** Usage with its cost attached (`cost_usd`), when the model is priced. */
export function priced(usage: Usage, entry: Pick<ModelEntry, "prices"> | null): Usage {
  const cost = costOf(usage, entry);
  return cost === null ? usage : { ...usage, cost_usd: cost };
}
