// The request parameters a conversation's settings turn into for its model: max_tokens within the
// model's maximum output, `thinking` and `output_config.effort` as the model takes them, and the
// server tools it opted into. One place, so turns, /replay and the summarization calls agree.
import type { ModelEntry } from "./models/catalog";
import { requestMaxTokens, type ServerToolName, type Settings, thinkingBudgetFor } from "./settings";
import type { ModelRequest, ServerToolSpec, ThinkingConfig } from "./types";

/** The `thinking` a request carries; undefined leaves the model's default (off on older models). */
export function thinkingConfig(
  s: Pick<Settings, "thinking" | "thinkingDisplay" | "thinkingBudgetTokens" | "outputReserveTokens">,
  entry: ModelEntry,
): ThinkingConfig | undefined {
  switch (s.thinking) {
    case "auto":
      // The model's own default, with the display the conversation asks for when it thinks.
      return entry.thinking.whenOmitted === "adaptive" ? { type: "adaptive", display: s.thinkingDisplay } : undefined;
    case "adaptive":
      return { type: "adaptive", display: s.thinkingDisplay };
    case "enabled":
      // Manual extended thinking: a budget below max_tokens (the settings' checks hold it there). No
      // interleaved-thinking beta header is sent, so the budget never reaches max_tokens.
      return { type: "enabled", budget_tokens: thinkingBudgetFor(s, entry), display: s.thinkingDisplay };
    case "between_tools":
      // Takes no other field (models/sonnet-5-5/migration-guide).
      return { type: "between_tools" };
    case "disabled":
      return { type: "disabled" };
  }
}

/** max_tokens, thinking and effort for a request on `entry`'s model. */
export function modelParams(
  s: Settings,
  entry: ModelEntry,
): Pick<ModelRequest, "max_tokens" | "thinking" | "output_config"> {
  const thinking = thinkingConfig(s, entry);
  return {
    // The API refuses a max_tokens above the model's maximum output.
    max_tokens: requestMaxTokens(s, entry),
    ...(thinking ? { thinking } : {}),
    ...(entry.effort && s.effort ? { output_config: { effort: s.effort } } : {}),
  };
}

/**
 * The most a web fetch puts into the context: the API truncates the fetched content to it, a PDF's
 * included (docs web-fetch-tool, "max_content_tokens"). The chars estimate weighs a fetched PDF by
 * it (render.ts fetchedDocumentTokens).
 */
export const WEB_FETCH_MAX_CONTENT_TOKENS = 20_000;

/** Server tool versions offered: the direct ones, with no code-execution container behind them. */
const SERVER_TOOL_SPECS: Record<ServerToolName, ServerToolSpec> = {
  web_search: { type: "web_search_20250305", name: "web_search", max_uses: 5 },
  web_fetch: {
    type: "web_fetch_20250910",
    name: "web_fetch",
    max_uses: 5,
    max_content_tokens: WEB_FETCH_MAX_CONTENT_TOKENS,
  },
};

export function serverToolSpecs(names: readonly ServerToolName[], entry: ModelEntry): ServerToolSpec[] {
  // A conversation moved to a model without one of its tools (a retirement, a refusal fallback) goes
  // on without it. One fixed order, whatever order the settings list them in: the tools lead the
  // cached prefix, and a reordered list is the same set.
  const order = Object.keys(SERVER_TOOL_SPECS) as ServerToolName[];
  return order.filter((n) => names.includes(n) && entry.serverTools.includes(n)).map((n) => SERVER_TOOL_SPECS[n]);
}

/**
 * A summarization call's parameters (a fold, the compaction's state): text within `textTokens`, with
 * the least thinking the model allows, and room for that thinking (it counts against max_tokens).
 */
export function summarizationParams(
  entry: ModelEntry,
  textTokens: number,
): Pick<ModelRequest, "max_tokens" | "thinking" | "output_config"> {
  const low = entry.effort?.levels.includes("low") ? { output_config: { effort: "low" } } : {};
  const accepts = entry.thinking.accepts;
  let thinking: ThinkingConfig | undefined;
  if (accepts.includes("disabled")) thinking = { type: "disabled" };
  else if (accepts.includes("between_tools")) thinking = { type: "between_tools" };
  else if (entry.thinking.whenOmitted === "adaptive") thinking = { type: "adaptive", display: "omitted" };
  const thinks = thinking?.type === "adaptive" || (!thinking && entry.thinking.whenOmitted === "adaptive");
  const room = thinks ? SUMMARY_THINKING_ROOM : 0;
  return { max_tokens: Math.min(entry.maxOutput, textTokens + room), ...(thinking ? { thinking } : {}), ...low };
}

/** Headroom for a summarization call's thinking on models where it cannot be turned off. */
export const SUMMARY_THINKING_ROOM = 8_000;
