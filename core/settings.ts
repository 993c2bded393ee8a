// Per-conversation settings: the seed's numbers as defaults, each visible and changeable
// through the API. Unknown keys and out-of-range values are rejected (400), never ignored.
// The model-dependent ones (the window, the output reserve, the chars-per-token estimate) default
// from the model's catalog entry, and every setting is checked against what that model accepts.
import { z } from "zod";
import { DEFAULT_MODEL, EFFORT_LEVELS, type Effort, type ModelEntry, SERVER_TOOL_NAMES } from "./models/catalog";
import { catalogEntry, charsPerTokenFor, effortRank } from "./models/lookup";

export const THINKING_SETTINGS = ["auto", "adaptive", "enabled", "between_tools", "disabled"] as const;
export const SERVER_TOOLS = SERVER_TOOL_NAMES;
export type ServerToolName = (typeof SERVER_TOOLS)[number];

export interface Settings {
  foldThresholdChars: number;
  tailMessages: number;
  summaryMaxChars: number;
  stubMinChars: number;
  stubAfterExchanges: number;
  stubBatchChars: number;
  model: string;
  contextWindowTokens: number;
  outputReserveTokens: number;
  compactTriggerRatio: number;
  compactTargetRatio: number;
  charsPerToken: number;
  maxToolIterations: number;
  clientToolTimeoutSeconds: number;
  /** `output_config.effort`; null: the model's default. */
  effort: Effort | null;
  /** `thinking.type`; "auto": leave it out, so the model's default applies. */
  thinking: (typeof THINKING_SETTINGS)[number];
  /**
   * `thinking.budget_tokens` under thinking "enabled" (manual extended thinking); null: the default
   * (thinkingBudgetFor). Below the request's max_tokens, which the output reserve sets.
   */
  thinkingBudgetTokens: number | null;
  /** `thinking.display`: "summarized" streams readable thinking (and progress notes between tool calls). */
  thinkingDisplay: "summarized" | "omitted";
  /** When the model refuses, the turn is asked again of this model; null: the refusal ends the turn. */
  refusalFallbackModel: string | null;
  /** Server tools offered on every request: web search and web fetch, run by the API (billed per use). */
  serverTools: ServerToolName[];
}

/** The settings that do not depend on the model: the seed's numbers. */
const SEED = {
  foldThresholdChars: 120_000,
  tailMessages: 8,
  summaryMaxChars: 6_000,
  stubMinChars: 2_000,
  stubAfterExchanges: 2,
  // Measured with `npm run bench:recall` (120 turns, file reads every 4th turn): cost index vs no
  // stubs 67.8% at 0, 67.9% at 4,000, 71.7% at 8,000, 82.7% at 16,000, 95.5% at 32,000. A jump
  // invalidates the cache from the oldest pending result on, so bigger batches cost more; 4,000
  // matches 0 while still grouping results just over stubMinChars into one transition.
  stubBatchChars: 4_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  maxToolIterations: 24,
  // How long a paused turn waits for its client tools' results before it ends with interrupted-call
  // results: long enough for a person answering by hand, short enough not to hold the turn all day.
  clientToolTimeoutSeconds: 600,
  effort: null,
  thinking: "auto",
  thinkingBudgetTokens: null,
  // Readable thinking by default: on current models the notes between tool calls come back inside
  // thinking blocks, empty under "omitted", and a chat would go silent between its tool calls.
  // Billing is the same either way.
  thinkingDisplay: "summarized",
  refusalFallbackModel: null,
  serverTools: [],
} as const satisfies Partial<Settings>;

/** Room for a reply and its thinking: thinking counts against max_tokens. */
const OUTPUT_RESERVE = 32_000;

/** The settings that follow the model: its window, a reserve within its max output, its tokenizer. */
export function modelDefaults(
  entry: ModelEntry,
): Pick<Settings, "model" | "contextWindowTokens" | "outputReserveTokens" | "charsPerToken"> {
  return {
    model: entry.id,
    contextWindowTokens: entry.contextWindow,
    outputReserveTokens: Math.min(OUTPUT_RESERVE, entry.maxOutput, Math.floor(entry.contextWindow / 4)),
    charsPerToken: charsPerTokenFor(entry),
  };
}

/**
 * What every conversation got before the catalog set these per model: a conversation still on them
 * moves to its new model's figures when its model changes.
 */
export const LEGACY_MODEL_DEFAULTS = {
  contextWindowTokens: 200_000,
  outputReserveTokens: 8_192,
  charsPerToken: 1.5,
} as const;

/** Every setting for a new conversation on `entry`'s model. */
export function defaultSettings(entry: ModelEntry = catalogEntry(DEFAULT_MODEL)!): Settings {
  return { ...SEED, serverTools: [], ...modelDefaults(entry) };
}

/** The defaults of the default model (the seed's numbers plus Claude Sonnet 5.5's). */
export const DEFAULT_SETTINGS: Readonly<Settings> = defaultSettings();

/** A head stored before a setting existed gets its default. */
export function withMissingSettings(stored: Partial<Settings> & Pick<Settings, "model">): Settings {
  return { ...SEED, serverTools: [], ...stored } as Settings;
}

/**
 * The smallest window a conversation takes. The fixed prompt (system prompt and core tools) measures
 * about 1,850 input tokens: a window that cannot hold it and a message beside the reserve would end
 * every turn context_full, with nothing telling the user why.
 */
export const MIN_CONTEXT_WINDOW_TOKENS = 4_000;
/** What the window must leave beside the output reserve: the fixed prompt and a message. */
export const MIN_PROMPT_ROOM_TOKENS = 3_000;

/** The API's least `budget_tokens`. */
export const MIN_THINKING_BUDGET = 1_024;
/** The budget thinking "enabled" gets unless the settings name one, within half of max_tokens. */
export const DEFAULT_THINKING_BUDGET = 8_000;

/** A request's max_tokens: the output reserve, within the model's maximum output. */
export function requestMaxTokens(s: Pick<Settings, "outputReserveTokens">, entry: ModelEntry): number {
  return Math.min(s.outputReserveTokens, entry.maxOutput);
}

/**
 * `budget_tokens` under thinking "enabled": the setting, else 8,000 within half of max_tokens (the
 * rest for the reply's text), never below the API's 1,024.
 */
export function thinkingBudgetFor(
  s: Pick<Settings, "thinkingBudgetTokens" | "outputReserveTokens">,
  entry: ModelEntry,
): number {
  const half = Math.floor(requestMaxTokens(s, entry) / 2);
  return s.thinkingBudgetTokens ?? Math.max(MIN_THINKING_BUDGET, Math.min(DEFAULT_THINKING_BUDGET, half));
}

/** Why thinking "enabled" cannot run within the settings' max_tokens (a message naming the field), or null. */
function manualBudgetProblem(s: Settings, entry: ModelEntry): string | null {
  const maxTokens = requestMaxTokens(s, entry);
  if (maxTokens <= MIN_THINKING_BUDGET)
    return `settings.outputReserveTokens: thinking "enabled" needs more than ${MIN_THINKING_BUDGET} (the least thinking budget); it is ${maxTokens}`;
  if (thinkingBudgetFor(s, entry) >= maxTokens)
    return `settings.thinkingBudgetTokens: must be smaller than ${maxTokens}, the request's max_tokens (settings.outputReserveTokens, within ${entry.id}'s maximum output)`;
  return null;
}

const int = (min: number, max: number) => z.number().int().min(min).max(max);
export const modelIdSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._:@-]+$/, "letters, digits and . _ : @ - only");

/** Every key optional: used for create (merged over defaults) and for patch (merged over current). */
export const settingsPatchSchema = z
  .strictObject({
    foldThresholdChars: int(1_000, 50_000_000),
    tailMessages: int(2, 500),
    summaryMaxChars: int(200, 100_000),
    stubMinChars: int(100, 10_000_000),
    stubAfterExchanges: int(1, 1_000),
    stubBatchChars: int(0, 10_000_000),
    model: modelIdSchema,
    contextWindowTokens: int(MIN_CONTEXT_WINDOW_TOKENS, 10_000_000),
    outputReserveTokens: int(64, 1_000_000),
    compactTriggerRatio: z.number().gt(0).max(1),
    compactTargetRatio: z.number().gt(0).lt(1),
    charsPerToken: z.number().min(0.25).max(20),
    maxToolIterations: int(1, 200),
    clientToolTimeoutSeconds: int(1, 86_400),
    effort: z.enum(EFFORT_LEVELS).nullable(),
    thinking: z.enum(THINKING_SETTINGS),
    thinkingBudgetTokens: int(MIN_THINKING_BUDGET, 1_000_000).nullable(),
    thinkingDisplay: z.enum(["summarized", "omitted"]),
    refusalFallbackModel: modelIdSchema.nullable(),
    serverTools: z
      .array(z.enum(SERVER_TOOLS))
      .max(SERVER_TOOLS.length)
      .refine((a) => new Set(a).size === a.length, "each tool at most once"),
  })
  .partial();

export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/** The effort a request runs at: the setting, or the model's default (null: the model takes none). */
export function effectiveEffort(s: Pick<Settings, "effort">, entry: ModelEntry): Effort | null {
  if (!entry.effort) return null;
  return s.effort ?? entry.effort.default;
}

/**
 * Cross-field rules, and the rules of the model the settings name (its catalog entry). Returns an
 * error message naming the field, or null.
 */
export function crossCheckSettings(s: Settings, entry: ModelEntry): string | null {
  if (s.outputReserveTokens >= s.contextWindowTokens)
    return "settings.outputReserveTokens: must be smaller than settings.contextWindowTokens";
  if (!leavesPromptRoom(s))
    return `settings.contextWindowTokens: must leave at least ${MIN_PROMPT_ROOM_TOKENS} tokens beside settings.outputReserveTokens for the prompt (the system prompt and tools alone take about 2,000); it leaves ${s.contextWindowTokens - s.outputReserveTokens}`;
  if (s.compactTargetRatio >= s.compactTriggerRatio)
    return "settings.compactTargetRatio: must be smaller than settings.compactTriggerRatio";
  if (s.outputReserveTokens > entry.maxOutput)
    return `settings.outputReserveTokens: at most ${entry.maxOutput} for ${entry.id} (its maximum output)`;
  if (s.effort !== null && !entry.effort) return `settings.effort: ${entry.id} takes no effort setting; use null`;
  if (s.effort !== null && entry.effort && !entry.effort.levels.includes(s.effort))
    return `settings.effort: ${entry.id} takes ${entry.effort.levels.join(", ")} (or null for its default, ${entry.effort.default})`;
  if (s.thinking !== "auto" && !entry.thinking.accepts.includes(s.thinking))
    return `settings.thinking: ${entry.id} does not take "${s.thinking}"; it takes ${["auto", ...entry.thinking.accepts].map((t) => `"${t}"`).join(", ")}`;
  if (s.thinking === "enabled") {
    const problem = manualBudgetProblem(s, entry);
    if (problem) return problem;
  }
  const effort = effectiveEffort(s, entry);
  if (
    (s.thinking === "disabled" || s.thinking === "between_tools") &&
    entry.thinking.offUpToEffort &&
    effort &&
    effortRank(effort) > effortRank(entry.thinking.offUpToEffort)
  )
    return `settings.thinking: "${s.thinking}" on ${entry.id} needs settings.effort at ${entry.thinking.offUpToEffort} or below (it is ${effort})`;
  const missing = s.serverTools.filter((t) => !entry.serverTools.includes(t));
  if (missing.length)
    return entry.serverTools.length
      ? `settings.serverTools: ${entry.id} has no ${missing.join(", ")} (it offers ${entry.serverTools.join(", ")})`
      : `settings.serverTools: ${entry.id} has no server tools`;
  if (s.refusalFallbackModel !== null && sameModel(s.refusalFallbackModel, s.model))
    return "settings.refusalFallbackModel: must be another model than settings.model";
  return null;
}

/** Whether the window holds the fixed prompt and a message beside the output reserve. */
export function leavesPromptRoom(s: Pick<Settings, "contextWindowTokens" | "outputReserveTokens">): boolean {
  return s.contextWindowTokens - s.outputReserveTokens >= MIN_PROMPT_ROOM_TOKENS;
}

/** `entry`'s default reserve, within a quarter of `window` (a user's own window may be smaller than the model's). */
export function reserveWithin(entry: ModelEntry, window: number): number {
  return Math.min(modelDefaults(entry).outputReserveTokens, Math.floor(window / 4));
}

/** Whether two model ids name one model: compared by the catalog id each resolves to (an alias is its model). */
export function sameModel(a: string, b: string): boolean {
  return (catalogEntry(a)?.id ?? a) === (catalogEntry(b)?.id ?? b);
}

export function mergeSettings(base: Settings, patch: SettingsPatch | undefined): Settings {
  const merged = { ...base };
  for (const [k, v] of Object.entries(patch ?? {})) if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  return merged;
}

/**
 * A patch that moves to another model: the model-dependent settings the patch does not set follow
 * the new model where they still had the old model's defaults (a user's own values are kept, the
 * output reserve cut to the new model's maximum), and the thinking setting returns to "auto" when
 * the new model does not take it. `keep` (the patch, unless told otherwise): the keys left as they
 * are for the checks to refuse; an inherited layer keeps none, so what the model cannot take falls
 * back to its defaults.
 */
export function settingsAfterModelChange(
  current: Settings,
  {
    patch,
    from,
    to,
    keep = patch,
  }: { patch: SettingsPatch; from: ModelEntry | null; to: ModelEntry; keep?: SettingsPatch },
): Settings {
  const merged = mergeSettings(current, patch);
  if (sameModel(current.model, to.id)) return merged;
  const before = from ? modelDefaults(from) : null;
  const after = modelDefaults(to);
  for (const key of ["contextWindowTokens", "outputReserveTokens", "charsPerToken"] as const) {
    const wasDefault = current[key] === before?.[key] || current[key] === LEGACY_MODEL_DEFAULTS[key];
    if (patch[key] === undefined && wasDefault) merged[key] = after[key];
  }
  return fitToModel(merged, to, keep);
}

/**
 * After a model change, the settings the change does not name (`named`: the user's own keys, left
 * for the checks to refuse) are left as creation leaves inherited ones (services/default-settings.ts):
 * a refusal fallback that is now the model itself is dropped, and an output reserve the window no
 * longer holds beside the prompt becomes the model's default (within a quarter of the window). No
 * change when the model stayed (`before`: its id before the change).
 */
export function unnamedAfterModelChange(
  s: Settings,
  { before, named }: { before: string; named: SettingsPatch },
  entry: ModelEntry,
): Settings {
  if (sameModel(before, s.model)) return s;
  const next = { ...s };
  if (
    named.refusalFallbackModel === undefined &&
    next.refusalFallbackModel !== null &&
    sameModel(next.refusalFallbackModel, next.model)
  )
    next.refusalFallbackModel = null;
  if (named.outputReserveTokens === undefined && !leavesPromptRoom(next))
    next.outputReserveTokens = reserveWithin(entry, next.contextWindowTokens);
  return next;
}

/**
 * Settings moved to another model, the one path for a PATCH and for the moves off a retired model (a
 * turn's, a fold's): the model-bound figures follow the new model (settingsAfterModelChange), and the
 * keys the user did not name now (`named`; the patch unless told otherwise, nothing for a move) are
 * cleaned up as creation cleans up inherited ones (unnamedAfterModelChange).
 */
export function settingsOnModel(
  current: Settings,
  change: { patch: SettingsPatch; from: ModelEntry | null; to: ModelEntry; named?: SettingsPatch },
): Settings {
  const { named = change.patch, ...moved } = change;
  return unnamedAfterModelChange(settingsAfterModelChange(current, moved), { before: current.model, named }, change.to);
}

/**
 * Settings brought within what `entry` takes, except the keys `keep` names (a user's own choice,
 * left for the checks to refuse): the output reserve cut to its maximum, a thinking type or an
 * effort level it does not take back to its default, a manual thinking budget the new max_tokens
 * cannot hold back to the default.
 */
export function fitToModel(s: Settings, entry: ModelEntry, keep: SettingsPatch = {}): Settings {
  const merged = { ...s };
  if (keep.outputReserveTokens === undefined)
    merged.outputReserveTokens = Math.min(merged.outputReserveTokens, entry.maxOutput);
  if (keep.thinking === undefined && merged.thinking !== "auto" && !entry.thinking.accepts.includes(merged.thinking))
    merged.thinking = "auto";
  if (keep.effort === undefined && merged.effort !== null && !entry.effort?.levels.includes(merged.effort))
    merged.effort = null;
  // Thinking off is taken only up to some effort on some models: past it, the model's default.
  const effort = effectiveEffort(merged, entry);
  if (
    keep.thinking === undefined &&
    (merged.thinking === "disabled" || merged.thinking === "between_tools") &&
    entry.thinking.offUpToEffort &&
    effort &&
    effortRank(effort) > effortRank(entry.thinking.offUpToEffort)
  )
    merged.thinking = "auto";
  // Manual thinking's budget below the max_tokens the model now allows: an inherited budget falls
  // back to the default, and thinking that cannot run at all to the model's default.
  if (merged.thinking === "enabled" && keep.thinkingBudgetTokens === undefined && manualBudgetProblem(merged, entry))
    merged.thinkingBudgetTokens = null;
  if (merged.thinking === "enabled" && keep.thinking === undefined && manualBudgetProblem(merged, entry))
    merged.thinking = "auto";
  // Server tools the model does not offer (web fetch on Claude Opus 5) are left out of what was inherited.
  if (keep.serverTools === undefined && merged.serverTools.some((t) => !entry.serverTools.includes(t)))
    merged.serverTools = merged.serverTools.filter((t) => entry.serverTools.includes(t));
  return merged;
}
