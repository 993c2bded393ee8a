// The model catalog: what Anthropic's model pages say about every Claude model a conversation may
// name, each fact with its source. One module, read by the settings (defaults and refusals), the
// request builder (window, max output, thinking, effort), pricing, GET /v1/models and the offline
// model (which behaves like the entry it is asked for).
//
// Data as of 2026-12-03, from the model pages, migration guides, pricing page and deprecations page
// on platform.claude.com and the pinned @anthropic-ai/sdk's types (its `Model` union and its
// deprecated-models table). Where the pages disagree the entry says which one it follows.

export type Lifecycle = "active" | "legacy" | "deprecated" | "retired";
export type ThinkingType = "adaptive" | "enabled" | "disabled" | "between_tools";
export type ThinkingDisplay = "summarized" | "omitted";
export const EFFORT_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const;
export const SERVER_TOOL_NAMES = ["web_search", "web_fetch"] as const;
export type ServerTool = (typeof SERVER_TOOL_NAMES)[number];
export type Effort = (typeof EFFORT_LEVELS)[number];
export type ModelLine = "haiku" | "sonnet" | "opus" | "fable" | "mythos";

/** USD per million tokens. */
export interface ModelPrices {
  input: number;
  output: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  /** A call whose prompt is over `overPromptTokens` costs `multiplier` times these prices. */
  longPrompt?: { overPromptTokens: number; multiplier: number };
}

export interface ModelThinking {
  /** `thinking.type` values the model accepts; any other is a 400. */
  accepts: readonly ThinkingType[];
  /** What a request without `thinking` does. */
  whenOmitted: "adaptive" | "off";
  /** `thinking.display` when the request does not set it. */
  display: ThinkingDisplay;
  /** `disabled` / `between_tools` are accepted only at this effort or below. */
  offUpToEffort?: Effort;
  /** Notes between tool calls come back as (progress-update) thinking blocks, not text. */
  progressInThinking: boolean;
  /** Thinking blocks are valid only while everything before them is byte-identical (prefix binding). */
  prefixBound: boolean;
  /**
   * Manual (`enabled`) thinking interleaves with the `interleaved-thinking-2025-05-14` beta header, so
   * `budget_tokens` may reach `max_tokens`. Elsewhere the header is accepted and ignored ("Claude Opus
   * 4.6: manual mode has no interleaved thinking at all"; "Claude Haiku 4.5 does not support
   * interleaved thinking"). Source: https://platform.claude.com/docs/en/build-with-claude/extended-thinking
   */
  manualInterleaved?: true;
  /**
   * `disabled` is refused with the errors page's always-on text ("Thinking defaults to adaptive mode
   * when not specified; use "thinking.type.enabled" with "budget_tokens"…"), on the models that page
   * names. Source: https://platform.claude.com/docs/en/api/errors (thinking cannot be disabled)
   */
  disabledPointsToEnabled?: true;
}

/**
 * Fast mode (`speed: "fast"`) on a model that offers it: `available` takes it with or without the
 * `fast-mode-2026-02-01` beta header, `beta` (research preview) only with it; from `removedOn`
 * (YYYY-MM-DD) on it is refused. A model without this field refuses `speed: "fast"`.
 */
export interface FastMode {
  status: "available" | "beta";
  removedOn?: string;
}

export interface ModelEntry {
  id: string;
  /** Other ids that name the same model (dated snapshots). */
  aliases: readonly string[];
  name: string;
  line: ModelLine | null;
  status: Exclude<Lifecycle, "retired">;
  deprecatedOn?: string;
  /** The scheduled retirement (YYYY-MM-DD): from that day on the entry is treated as retired. */
  retiresOn?: string;
  /** The model Anthropic recommends instead, for legacy and deprecated models. */
  replacement?: string;
  contextWindow: number;
  maxOutput: number;
  thinking: ModelThinking;
  /** null: the model takes no `output_config.effort`. */
  effort: { levels: readonly Effort[]; default: Effort } | null;
  /** A final assistant message (prefill) is accepted. */
  prefill: boolean;
  /** `temperature` / `top_p` / `top_k` are accepted (never under API version 2026-10-21, which the SDK sends). */
  sampling: boolean;
  /** `tool_choice` of type `any` or `tool` is accepted. */
  forcedToolChoice: boolean;
  /**
   * A forced tool choice is refused with adaptive thinking too, not only with manual thinking
   * (Claude 4.7 and earlier: langchain-ai/langchain-aws#1151; Opus 4.8 and the Claude 5 models take
   * it, #1141). Source: https://platform.claude.com/docs/en/build-with-claude/thinking-tool-workflows
   */
  forcedToolChoiceRefusedWithThinking?: true;
  /** Tokens this model makes of a text, against the Claude 4 tokenizer's count of it. */
  tokenizerRatio: number;
  /** Prompts shorter than this are processed without caching. */
  minCacheTokens: number;
  /** Images one request may carry. */
  maxImages: number;
  /** null: not priced (a model only Anthropic's Models API knows); its usage is counted, not costed. */
  prices: ModelPrices | null;
  /** The server tools (web search, web fetch) the model offers; a request naming another is a 400. */
  serverTools: readonly ServerTool[];
  /** Fast mode, where the fast-mode page lists the model (FAST_MODE_PAGE); absent: `speed: "fast"` is a 400. */
  fastMode?: FastMode;
  /**
   * `inference_geo` (where inference runs) is accepted: Claude Opus 4.6 and every later model; a
   * request naming it on an older model is a 400 (DATA_RESIDENCY_PAGE). Absent (an entry built from
   * the Models API, which does not report it): treated as not accepted.
   */
  inferenceGeo?: boolean;
  sources: readonly string[];
}

export interface RetiredModel {
  id: string;
  aliases: readonly string[];
  name: string;
  status: "retired";
  retiredOn: string;
  replacement: string;
  sources: readonly string[];
}

const DOCS = "https://platform.claude.com/docs/en";
const PRICING = `${DOCS}/about-claude/pricing`;
const DEPRECATIONS = `${DOCS}/about-claude/model-deprecations`;
const THINKING_TABLE = `${DOCS}/build-with-claude/thinking-troubleshooting`;
const EFFORT_PAGE = `${DOCS}/build-with-claude/effort`;
const VISION = `${DOCS}/build-with-claude/vision`;
/**
 * Fast mode "is available on Claude Fable 5.2, Claude Mythos 5.2, and Claude Opus 5.5", "in research
 * preview on Claude Opus 5 and deprecated on Claude Opus 4.8" (removal date November 30, 2026, after
 * which `speed: "fast"` on claude-opus-4-8 is an error); the preview models need the beta header.
 */
export const FAST_MODE_PAGE = `${DOCS}/build-with-claude/fast-mode`;
/**
 * "The inference_geo parameter is supported on Claude Opus 4.6 and all subsequent models. Older
 * models released before Opus 4.6 do not support the parameter. Requests with inference_geo on
 * legacy models return a 400 error." Values: "global" (the default) and "us". The AWS copy names
 * the refused ones: "Claude Opus 4.5, Claude Sonnet 4.5, or Claude Haiku 4.5".
 */
export const DATA_RESIDENCY_PAGE = `${DOCS}/build-with-claude/data-residency`;
const SDK_MODELS = "@anthropic-ai/sdk 1.16.0: resources/messages/messages.d.ts (type Model)";

/** Images per request: 100 for models with a 200K window, 600 for the others (vision page). */
const imagesFor = (window: number) => (window <= 200_000 ? 100 : 600);

const price = (input: number, output: number, cacheRead: number): ModelPrices => ({
  input,
  output,
  cacheWrite5m: input * 1.25,
  cacheWrite1h: input * 2,
  cacheRead,
});

const ALWAYS_ON: ModelThinking = {
  accepts: ["adaptive"],
  whenOmitted: "adaptive",
  display: "omitted",
  progressInThinking: true,
  prefixBound: false,
};
const ALL_EFFORT = { levels: EFFORT_LEVELS, default: "high" } as const;
const WEB_TOOLS = SERVER_TOOL_NAMES;

function entry(e: Omit<ModelEntry, "maxImages"> & { maxImages?: number }): ModelEntry {
  return { ...e, maxImages: e.maxImages ?? imagesFor(e.contextWindow) };
}

export const MODELS: readonly ModelEntry[] = [
  entry({
    id: "claude-sonnet-5-5",
    aliases: [],
    name: "Claude Sonnet 5.5",
    line: "sonnet",
    status: "active",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    // Adaptive thinking on by default; `disabled` and `enabled` are 400s; `between_tools` (no up-front
    // thinking, progress notes still as thinking blocks) only at effort low/medium/high.
    thinking: {
      accepts: ["adaptive", "between_tools"],
      whenOmitted: "adaptive",
      display: "omitted",
      offUpToEffort: "high",
      progressInThinking: true,
      prefixBound: true,
    },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    // The migration guide: same prices as Sonnet 5 except cache reads at $0.10 (early copies of the
    // overview page said $0.20; the guide and the pricing page's footnote say $0.10).
    prices: price(2, 10, 0.1),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [
      `${DOCS}/models/sonnet-5-5/overview`,
      `${DOCS}/models/sonnet-5-5/migration-guide`,
      `${DOCS}/models/sonnet-5-5/whats-new-sonnet-5-5`,
      PRICING,
    ],
  }),
  entry({
    id: "claude-opus-5-5",
    aliases: [],
    name: "Claude Opus 5.5",
    line: "opus",
    status: "active",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: { ...ALWAYS_ON, prefixBound: true },
    effort: { levels: EFFORT_LEVELS, default: "medium" },
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(4, 20, 0.2),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    fastMode: { status: "available" },
    sources: [`${DOCS}/models/opus-5-5/overview`, `${DOCS}/models/opus-5-5/migration-guide`, PRICING],
  }),
  entry({
    id: "claude-haiku-5-5",
    aliases: [],
    name: "Claude Haiku 5.5",
    line: "haiku",
    status: "active",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "disabled"],
      whenOmitted: "adaptive",
      display: "omitted",
      offUpToEffort: "high",
      progressInThinking: false,
      prefixBound: true,
    },
    effort: { levels: EFFORT_LEVELS, default: "medium" },
    prefill: false,
    sampling: false,
    // Forced tool choice is accepted (the reply then starts with the call, without thinking).
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    // Prompts over 100K tokens cost five times the base rate.
    prices: { ...price(0.1, 0.5, 0.01), longPrompt: { overPromptTokens: 100_000, multiplier: 5 } },
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [
      `${DOCS}/models/haiku-5-5/overview`,
      `${DOCS}/models/haiku-5-5/whats-new-haiku-5-5`,
      `${DOCS}/models/haiku-5-5/migration-guide`,
      PRICING,
    ],
  }),
  entry({
    id: "claude-fable-5-2",
    aliases: [],
    name: "Claude Fable 5.2",
    line: "fable",
    status: "active",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    // Only the models-overview comparison row is published (1M, 128K, always-on adaptive, effort
    // high); the request rules follow Fable 5.1's.
    thinking: { ...ALWAYS_ON, prefixBound: true },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(8, 40, 0.2),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    fastMode: { status: "available" },
    sources: [`${DOCS}/models/overview`, PRICING, SDK_MODELS],
  }),
  entry({
    id: "claude-mythos-5-2",
    aliases: [],
    name: "Claude Mythos 5.2",
    line: "mythos",
    status: "active",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    // The prefix check applies to every account on Fable 5.2 and Mythos 5.2 alike (whats-new-fable-5-2).
    thinking: { ...ALWAYS_ON, prefixBound: true },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(8, 40, 0.2),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    fastMode: { status: "available" },
    sources: [`${DOCS}/models/fable-5-2/whats-new-fable-5-2`, PRICING, SDK_MODELS],
  }),
  entry({
    id: "claude-fable-5-1",
    aliases: [],
    name: "Claude Fable 5.1",
    line: "fable",
    status: "legacy",
    replacement: "claude-fable-5-2",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: { ...ALWAYS_ON, prefixBound: true, disabledPointsToEnabled: true },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(10, 50, 0.25),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/fable-5-1/overview`, `${DOCS}/models/fable-5-1/whats-new-fable-5-1`, PRICING],
  }),
  entry({
    id: "claude-mythos-5-1",
    aliases: [],
    name: "Claude Mythos 5.1",
    line: "mythos",
    status: "legacy",
    replacement: "claude-mythos-5-2",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    // "Claude Mythos 5.1 doesn't run this check" (the prefix binding of thinking blocks).
    thinking: { ...ALWAYS_ON, disabledPointsToEnabled: true },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(10, 50, 0.25),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/fable-5-1/whats-new-fable-5-1`, PRICING],
  }),
  entry({
    id: "claude-sonnet-5",
    aliases: [],
    name: "Claude Sonnet 5",
    line: "sonnet",
    status: "legacy",
    replacement: "claude-sonnet-5-5",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "disabled"],
      whenOmitted: "adaptive",
      display: "omitted",
      progressInThinking: false,
      prefixBound: false,
    },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 1_024,
    prices: price(2, 10, 0.2),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/sonnet-5/overview`, THINKING_TABLE, PRICING],
  }),
  entry({
    id: "claude-opus-5",
    aliases: [],
    name: "Claude Opus 5",
    line: "opus",
    status: "legacy",
    replacement: "claude-opus-5-5",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "disabled"],
      whenOmitted: "adaptive",
      display: "omitted",
      offUpToEffort: "high",
      progressInThinking: false,
      prefixBound: false,
    },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(5, 25, 0.5),
    // "Web fetch is not available on Claude Opus 5" (its migration guide).
    serverTools: ["web_search"],
    inferenceGeo: true,
    fastMode: { status: "beta" },
    sources: [`${DOCS}/models/opus-5/overview`, `${DOCS}/models/opus-5/migration-guide`, THINKING_TABLE, PRICING],
  }),
  entry({
    id: "claude-fable-5",
    aliases: [],
    name: "Claude Fable 5",
    line: "fable",
    status: "legacy",
    replacement: "claude-fable-5-2",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: { ...ALWAYS_ON, progressInThinking: true, disabledPointsToEnabled: true },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(10, 50, 1),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/fable-5/overview`, THINKING_TABLE, PRICING],
  }),
  entry({
    id: "claude-mythos-5",
    aliases: [],
    name: "Claude Mythos 5",
    line: "mythos",
    status: "legacy",
    replacement: "claude-mythos-5-2",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: { ...ALWAYS_ON, disabledPointsToEnabled: true },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 512,
    prices: price(10, 50, 1),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/fable-5/introducing-claude-fable-5-and-claude-mythos-5`, PRICING],
  }),
  entry({
    id: "claude-opus-4-8",
    aliases: [],
    name: "Claude Opus 4.8",
    line: "opus",
    status: "legacy",
    replacement: "claude-opus-5-5",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "disabled"],
      whenOmitted: "off",
      display: "omitted",
      progressInThinking: false,
      prefixBound: false,
    },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 1_024,
    prices: price(5, 25, 0.5),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    // Deprecated on October 30, 2026; removed November 30, 2026 (the model itself stays).
    fastMode: { status: "beta", removedOn: "2026-11-30" },
    sources: [`${DOCS}/models/opus-4-8/overview`, THINKING_TABLE, PRICING],
  }),
  entry({
    id: "claude-opus-4-7",
    aliases: [],
    name: "Claude Opus 4.7",
    line: "opus",
    status: "legacy",
    replacement: "claude-opus-5-5",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    // Anthropic's thinking table accepts `disabled` here (Bedrock's page says otherwise); the catalog follows Anthropic's.
    thinking: {
      accepts: ["adaptive", "disabled"],
      whenOmitted: "off",
      display: "omitted",
      progressInThinking: false,
      prefixBound: false,
    },
    effort: ALL_EFFORT,
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    forcedToolChoiceRefusedWithThinking: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 2_048,
    prices: price(5, 25, 0.5),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/opus-4-7/overview`, THINKING_TABLE, PRICING],
  }),
  entry({
    id: "claude-mythos-preview",
    aliases: [],
    name: "Claude Mythos Preview",
    line: "mythos",
    status: "deprecated",
    deprecatedOn: "2026-06-09",
    // The SDK's deprecated-models table gives end of life June 30, 2026.
    retiresOn: "2026-06-30",
    replacement: "claude-mythos-5-2",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "enabled"],
      whenOmitted: "adaptive",
      display: "omitted",
      progressInThinking: false,
      prefixBound: false,
      disabledPointsToEnabled: true,
    },
    effort: { levels: ["low", "medium", "high", "max"], default: "high" },
    prefill: false,
    sampling: false,
    forcedToolChoice: true,
    tokenizerRatio: 1.3,
    minCacheTokens: 2_048,
    prices: price(10, 50, 1),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [DEPRECATIONS, THINKING_TABLE, "@anthropic-ai/sdk 1.16.0: internal/data/deprecated-models.ts"],
  }),
  entry({
    id: "claude-opus-4-6",
    aliases: [],
    name: "Claude Opus 4.6",
    line: "opus",
    status: "legacy",
    replacement: "claude-opus-5-5",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "enabled", "disabled"],
      whenOmitted: "off",
      display: "summarized",
      progressInThinking: false,
      prefixBound: false,
    },
    effort: { levels: ["low", "medium", "high", "max"], default: "high" },
    prefill: false,
    sampling: true,
    forcedToolChoice: true,
    forcedToolChoiceRefusedWithThinking: true,
    tokenizerRatio: 1,
    minCacheTokens: 4_096,
    prices: price(5, 25, 0.5),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/opus-4-6/overview`, THINKING_TABLE, EFFORT_PAGE, PRICING, DATA_RESIDENCY_PAGE],
  }),
  entry({
    id: "claude-sonnet-4-6",
    aliases: [],
    name: "Claude Sonnet 4.6",
    line: "sonnet",
    status: "legacy",
    replacement: "claude-sonnet-5-5",
    contextWindow: 1_000_000,
    maxOutput: 128_000,
    thinking: {
      accepts: ["adaptive", "enabled", "disabled"],
      whenOmitted: "off",
      display: "summarized",
      progressInThinking: false,
      prefixBound: false,
      manualInterleaved: true,
    },
    effort: { levels: ["low", "medium", "high", "max"], default: "high" },
    prefill: false,
    sampling: true,
    forcedToolChoice: true,
    forcedToolChoiceRefusedWithThinking: true,
    tokenizerRatio: 1,
    minCacheTokens: 1_024,
    prices: price(3, 15, 0.3),
    serverTools: WEB_TOOLS,
    inferenceGeo: true,
    sources: [`${DOCS}/models/sonnet-4-6/overview`, THINKING_TABLE, EFFORT_PAGE, PRICING],
  }),
  entry({
    id: "claude-haiku-4-5",
    aliases: ["claude-haiku-4-5-20251001"],
    name: "Claude Haiku 4.5",
    line: "haiku",
    status: "legacy",
    replacement: "claude-haiku-5-5",
    contextWindow: 200_000,
    maxOutput: 64_000,
    thinking: {
      accepts: ["enabled", "disabled"],
      whenOmitted: "off",
      display: "summarized",
      progressInThinking: false,
      prefixBound: false,
    },
    effort: null,
    prefill: true,
    sampling: true,
    forcedToolChoice: true,
    tokenizerRatio: 1,
    minCacheTokens: 4_096,
    prices: price(1, 5, 0.1),
    serverTools: WEB_TOOLS,
    inferenceGeo: false,
    sources: [`${DOCS}/models/haiku-4-5/overview`, THINKING_TABLE, PRICING, VISION, DATA_RESIDENCY_PAGE],
  }),
  entry({
    id: "claude-opus-4-5",
    aliases: ["claude-opus-4-5-20251101"],
    name: "Claude Opus 4.5",
    line: "opus",
    status: "deprecated",
    deprecatedOn: "2026-11-23",
    retiresOn: "2027-01-22",
    replacement: "claude-opus-5-5",
    contextWindow: 200_000,
    maxOutput: 64_000,
    thinking: {
      accepts: ["enabled", "disabled"],
      whenOmitted: "off",
      display: "summarized",
      progressInThinking: false,
      prefixBound: false,
      manualInterleaved: true,
    },
    effort: { levels: ["low", "medium", "high"], default: "high" },
    prefill: true,
    sampling: true,
    forcedToolChoice: true,
    tokenizerRatio: 1,
    minCacheTokens: 4_096,
    prices: price(5, 25, 0.5),
    serverTools: WEB_TOOLS,
    inferenceGeo: false,
    sources: [
      DEPRECATIONS,
      "@anthropic-ai/sdk 1.16.0: internal/data/deprecated-models.ts (end of life January 22nd, 2027)",
      THINKING_TABLE,
      PRICING,
      DATA_RESIDENCY_PAGE,
    ],
  }),
];

/** Models no request may name any more: a request to one answers 404 `model: <id>`. */
export const RETIRED_MODELS: readonly RetiredModel[] = [
  retired("claude-sonnet-4-5", {
    aliases: ["claude-sonnet-4-5-20250929"],
    name: "Claude Sonnet 4.5",
    retiredOn: "2026-11-30",
    replacement: "claude-sonnet-5-5",
    sources: [
      `${DOCS}/models/sonnet-4-5/overview`,
      DEPRECATIONS,
      "@anthropic-ai/sdk CHANGELOG 1.15.0: remove retired Claude Sonnet 4.5 models",
    ],
  }),
  retired("claude-opus-4-1", {
    aliases: ["claude-opus-4-1-20250805"],
    name: "Claude Opus 4.1",
    retiredOn: "2026-08-05",
    replacement: "claude-opus-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-opus-4-0", {
    aliases: ["claude-opus-4-20250514"],
    name: "Claude Opus 4",
    retiredOn: "2026-06-15",
    replacement: "claude-opus-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-sonnet-4-0", {
    aliases: ["claude-sonnet-4-20250514"],
    name: "Claude Sonnet 4",
    retiredOn: "2026-06-15",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS, `${DOCS}/models/sonnet-5-5/migration-guide`],
  }),
  retired("claude-3-7-sonnet-20250219", {
    aliases: ["claude-3-7-sonnet-latest"],
    name: "Claude Sonnet 3.7",
    retiredOn: "2026-02-19",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS, `${DOCS}/models/sonnet-5-5/migration-guide`],
  }),
  retired("claude-3-5-haiku-20241022", {
    aliases: ["claude-3-5-haiku-latest"],
    name: "Claude Haiku 3.5",
    retiredOn: "2026-02-19",
    replacement: "claude-haiku-5-5",
    sources: [DEPRECATIONS, `${DOCS}/models/haiku-5-5/migration-guide`],
  }),
  retired("claude-3-haiku-20240307", {
    aliases: [],
    name: "Claude Haiku 3",
    retiredOn: "2026-04-19",
    replacement: "claude-haiku-5-5",
    sources: [DEPRECATIONS, `${DOCS}/models/haiku-5-5/migration-guide`],
  }),
  retired("claude-3-opus-20240229", {
    aliases: ["claude-3-opus-latest"],
    name: "Claude Opus 3",
    retiredOn: "2026-01-05",
    replacement: "claude-opus-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-3-5-sonnet-20241022", {
    aliases: ["claude-3-5-sonnet-latest"],
    name: "Claude Sonnet 3.5",
    retiredOn: "2025-10-28",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-3-5-sonnet-20240620", {
    aliases: [],
    name: "Claude Sonnet 3.5 (June 2024)",
    retiredOn: "2025-10-28",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-3-sonnet-20240229", {
    aliases: [],
    name: "Claude Sonnet 3",
    retiredOn: "2025-07-21",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-2.1", {
    aliases: [],
    name: "Claude 2.1",
    retiredOn: "2025-07-21",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS],
  }),
  retired("claude-2.0", {
    aliases: [],
    name: "Claude 2.0",
    retiredOn: "2025-07-21",
    replacement: "claude-sonnet-5-5",
    sources: [DEPRECATIONS],
  }),
];

function retired(
  id: string,
  {
    aliases,
    name,
    retiredOn,
    replacement,
    sources,
  }: { aliases: string[]; name: string; retiredOn: string; replacement: string; sources: string[] },
): RetiredModel {
  return { id, aliases, name, status: "retired", retiredOn, replacement, sources };
}

/** Turns and folds use this model unless DEFAULT_MODEL or a conversation's settings say otherwise. */
export const DEFAULT_MODEL = "claude-sonnet-5-5";
