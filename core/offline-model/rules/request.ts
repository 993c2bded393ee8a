/**
 * Body-level rules that depend on the model: sampling parameters, max_tokens, thinking, effort and
 * forced tool choice. Messages follow the documented wording where there is one; where the docs
 * name the refusal but not its text, the wording is ours and the fixture says so.
 */
import { EFFORT_LEVELS, type Effort, type ThinkingType } from "../../models/catalog";
import { effortRank } from "../../models/lookup";
import { invalid } from "../errors";
import { isObject, literal, type Rule } from "./context";

/**
 * API version 2026-10-21 (the one SDK 1.16.0 sends) removed `temperature`, `top_p` and `top_k`:
 * sending one, even at its default, is a 400. Source: https://platform.claude.com/docs/en/api/versioning
 * (and /api/migration-2026-10-21). Wording as reported by live tests: `temperature: Extra inputs are not permitted`.
 */
export const samplingRemoved: Rule = ({ body }) => {
  for (const key of ["temperature", "top_p", "top_k"])
    if (key in body) throw invalid(`${key}: Extra inputs are not permitted`);
};

/**
 * max_tokens above the model's output ceiling. Source: https://platform.claude.com/docs/en/about-claude/models/overview
 * (max output per model); wording from the API (anthropics/claude-code#24451).
 */
export const maxTokensCap: Rule = ({ body, model, endpoint }) => {
  if (endpoint !== "messages") return;
  const n = body.max_tokens as number;
  if (n > model.maxOutput)
    throw invalid(
      `max_tokens: ${n} > ${model.maxOutput}, which is the maximum allowed number of output tokens for ${model.id}`,
    );
};

/**
 * `max_tokens: 0` only warms the cache: it cannot be combined with streaming, manual thinking or a
 * forced tool choice. Source: https://platform.claude.com/docs/en/build-with-claude/prompt-caching
 * (pre-warming the cache). Wording ours.
 */
export const maxTokensZero: Rule = ({ body, endpoint }) => {
  if (endpoint !== "messages" || body.max_tokens !== 0) return;
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  const thinking = isObject(body.thinking) ? body.thinking.type : undefined;
  const what =
    body.stream === true
      ? "stream: true"
      : thinking === "enabled"
        ? 'thinking.type "enabled"'
        : choice === "any" || choice === "tool"
          ? `tool_choice.type "${String(choice)}"`
          : null;
  if (what) throw invalid(`max_tokens: a value of 0 cannot be combined with ${what}`);
};

const USE_ADAPTIVE = 'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';

/** The request's effort, or the model's default. */
export function effectiveEffort(body: Record<string, unknown>, defaultEffort: Effort | undefined): Effort | undefined {
  const set = isObject(body.output_config) ? body.output_config.effort : undefined;
  return typeof set === "string" ? (set as Effort) : defaultEffort;
}

/**
 * thinking.type values the model refuses, each with its documented message.
 * Sources: https://platform.claude.com/docs/en/api/errors (extended thinking not supported; thinking
 * cannot be disabled, with its own text on the models that page names: the catalog's
 * `disabledPointsToEnabled`), https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide (disabled
 * on Sonnet 5.5 points to between_tools), https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting
 * (per-model table; adaptive refused on 4.5 and earlier).
 */
export const thinkingType: Rule = ({ body, model }) => {
  if (!isObject(body.thinking)) return;
  const type = body.thinking.type as ThinkingType;
  const accepts = model.thinking.accepts;
  if (accepts.includes(type)) return;
  if (type === "adaptive") throw invalid("adaptive thinking is not supported on this model");
  if (type === "disabled" && accepts.includes("between_tools")) {
    throw invalid(
      `"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" for the lowest thinking setting, or "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`,
    );
  }
  if (type === "disabled" && model.thinking.disabledPointsToEnabled) {
    throw invalid(
      `"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode when not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.`,
    );
  }
  throw invalid(`"thinking.type.${type}" is not supported for this model. ${USE_ADAPTIVE}`);
};

/**
 * Thinking turned off (`disabled`, `between_tools`) only at effort `high` or below where the model
 * limits it. Sources: https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5
 * (between_tools at low, medium, high), https://platform.claude.com/docs/en/models/haiku-5-5/whats-new-haiku-5-5
 * and the thinking-troubleshooting table (Opus 5). Wording ours.
 */
export const thinkingOffEffort: Rule = ({ body, model }) => {
  if (!isObject(body.thinking) || !model.thinking.offUpToEffort) return;
  const type = body.thinking.type;
  if (type !== "disabled" && type !== "between_tools") return;
  const effort = effectiveEffort(body, model.effort?.default);
  if (effort && EFFORT_LEVELS.includes(effort) && effortRank(effort) > effortRank(model.thinking.offUpToEffort)) {
    throw invalid(
      `"thinking.type.${type}" is not supported with output_config.effort "${effort}" on this model. Use effort "${model.thinking.offUpToEffort}" or lower.`,
    );
  }
};

/**
 * `display` takes "summarized" or "omitted" ("updates" needs a beta header and is refused like any
 * unknown value). Source: https://platform.claude.com/docs/en/build-with-claude/thinking (controlling thinking display).
 */
export const thinkingDisplay: Rule = ({ body }) => {
  if (!isObject(body.thinking) || !("display" in body.thinking)) return;
  literal(body.thinking.display, {
    path: `thinking.${String(body.thinking.type)}.display`,
    values: ["summarized", "omitted"],
    nullable: true,
  });
};

export const INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14";

/**
 * Manual thinking: `budget_tokens` at least 1,024 and below max_tokens, except with interleaved
 * thinking (its beta header, on the models whose manual mode interleaves: the catalog's
 * `manualInterleaved`), where the budget spans the whole assistant turn and "can exceed this
 * limit, as the token limit becomes your entire context window". Source:
 * https://platform.claude.com/docs/en/build-with-claude/extended-thinking (wording from the API).
 */
export const thinkingBudget: Rule = ({ body, endpoint, model, betas }) => {
  if (!isObject(body.thinking) || body.thinking.type !== "enabled") return;
  const budget = body.thinking.budget_tokens;
  if (typeof budget !== "number" || !Number.isInteger(budget))
    throw invalid("thinking.enabled.budget_tokens: Input should be a valid integer");
  if (budget < 1024) throw invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
  // The header is accepted on every model but only takes effect where manual mode interleaves.
  const interleaved = betas.includes(INTERLEAVED_THINKING_BETA) && model.thinking.manualInterleaved === true;
  if (endpoint === "messages" && !interleaved && budget >= (body.max_tokens as number)) {
    throw invalid(
      "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
    );
  }
};

/**
 * output_config.effort: one of the five levels, and one the model lists (none on a model without
 * effort). Source: https://platform.claude.com/docs/en/build-with-claude/effort. Wording ours for
 * the per-model refusal.
 */
export const effortLevel: Rule = ({ body, model }) => {
  if (!isObject(body.output_config) || body.output_config.effort === undefined || body.output_config.effort === null)
    return;
  literal(body.output_config.effort, { path: "output_config.effort", values: EFFORT_LEVELS });
  const effort = body.output_config.effort as Effort;
  if (!model.effort) throw invalid("output_config.effort: this model does not support the effort parameter");
  if (!model.effort.levels.includes(effort)) {
    throw invalid(
      `output_config.effort: "${effort}" is not supported for this model. Supported values: ${model.effort.levels.map((l) => `"${l}"`).join(", ")}`,
    );
  }
};

/**
 * Forced tool use (`any` / `tool`) on models that refuse it, count_tokens included. Source:
 * https://platform.claude.com/docs/en/api/errors (forced tool use not supported).
 */
export const forcedToolChoice: Rule = ({ body, model }) => {
  const type = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  if ((type === "any" || type === "tool") && !model.forcedToolChoice)
    throw invalid('tool_choice: type "tool" and "any" are not supported for this model.');
};

/**
 * Forced tool use with manual (`enabled`) thinking, and with adaptive thinking on the models whose
 * catalog entry says so (Claude 4.7 and earlier; Opus 4.8 and the Claude 5 models take it). Sources:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools (forcing tool use with
 * extended thinking "will result in an error"),
 * https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows ("tool_choice options
 * that force tool use return an error while thinking is on"). Wording as reported in the wild.
 */
export const forcedToolChoiceThinking: Rule = ({ body, model }) => {
  const type = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  const thinking = isObject(body.thinking) ? body.thinking.type : undefined;
  const refused = thinking === "enabled" || (thinking === "adaptive" && model.forcedToolChoiceRefusedWithThinking);
  if ((type === "any" || type === "tool") && refused)
    throw invalid("Thinking may not be enabled when tool_choice forces tool use.");
};

export const FAST_MODE_BETA = "fast-mode-2026-02-01";

/**
 * `speed: "fast"` only where the model offers fast mode (the catalog's `fastMode`): research-preview
 * models need the `fast-mode-2026-02-01` beta header, and from a removal date on the model refuses
 * it ("After removal, requests to claude-opus-4-8 with speed: "fast" return an error"). Source:
 * FAST_MODE_PAGE (https://platform.claude.com/docs/en/build-with-claude/fast-mode: "Fast mode works
 * only on supported models"). Wording ours: the docs name the refusals, not their text.
 */
export const fastMode: Rule = ({ body, model, betas, day }) => {
  if (body.speed !== "fast") return;
  const fast = model.fastMode;
  if (!fast) throw invalid('speed: "fast" is not supported for this model.');
  if (fast.removedOn && day >= fast.removedOn)
    throw invalid(`speed: "fast" is no longer supported for ${model.id}: fast mode was removed on ${fast.removedOn}.`);
  if (fast.status === "beta" && !betas.includes(FAST_MODE_BETA))
    throw invalid(
      `speed: "fast" on this model requires the \`${FAST_MODE_BETA}\` value in the \`anthropic-beta\` header.`,
    );
};
