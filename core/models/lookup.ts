// Finding a model by id or alias, its lifecycle on a given day, the model that replaces a retired
// one, and a conservative entry for a model only Anthropic's Models API knows (released after this
// catalog), so a new model works without a release of the platform.
import {
  EFFORT_LEVELS,
  MODELS,
  RETIRED_MODELS,
  type Effort,
  type Lifecycle,
  type ModelEntry,
  type RetiredModel,
  type ThinkingType,
} from "./catalog";

export type ModelFinding =
  | { kind: "current"; entry: ModelEntry; status: Exclude<Lifecycle, "retired"> }
  | { kind: "retired"; id: string; name: string; retiredOn: string; replacement: ModelEntry }
  | { kind: "unknown" };

const byId = new Map<string, ModelEntry>();
for (const m of MODELS) for (const id of [m.id, ...m.aliases]) byId.set(id, m);
const retiredById = new Map<string, RetiredModel>();
for (const m of RETIRED_MODELS) for (const id of [m.id, ...m.aliases]) retiredById.set(id, m);

export const utcDay = (at: number = Date.now()): string => new Date(at).toISOString().slice(0, 10);

/**
 * The catalog's answer for an id on a day: a current model, a retired one (with the model that
 * replaces it), or unknown. A deprecated model is taken as retired from its retirement day on.
 */
export function findModel(id: string, day: string = utcDay()): ModelFinding {
  const entry = byId.get(id);
  if (entry) {
    if (entry.retiresOn && entry.retiresOn <= day)
      return {
        kind: "retired",
        id: entry.id,
        name: entry.name,
        retiredOn: entry.retiresOn,
        replacement: replacementOf(entry.replacement, day),
      };
    return { kind: "current", entry, status: entry.status };
  }
  const gone = retiredById.get(id);
  if (gone)
    return {
      kind: "retired",
      id: gone.id,
      name: gone.name,
      retiredOn: gone.retiredOn,
      replacement: replacementOf(gone.replacement, day),
    };
  return { kind: "unknown" };
}

/** A catalog entry by id or alias, whatever its lifecycle (null when the catalog does not list it). */
export function catalogEntry(id: string): ModelEntry | null {
  return byId.get(id) ?? null;
}

/** Follows replacements until a model that is not retired on `day`. */
function replacementOf(id: string | undefined, day: string, seen = new Set<string>()): ModelEntry {
  const entry = id ? byId.get(id) : undefined;
  if (!entry || seen.has(entry.id)) return byId.get("claude-sonnet-5-5")!;
  if (entry.retiresOn && entry.retiresOn <= day) return replacementOf(entry.replacement, day, seen.add(entry.id));
  return entry;
}

/** What the Models API says of a model (the SDK's ModelInfo, the fields read here). */
export interface ModelInfoLike {
  id: string;
  display_name?: string;
  lifecycle?: "active" | "deprecated" | "retired";
  line?: string | null;
  retires_at?: string | null;
  deprecated_at?: string | null;
  max_input_tokens?: number | null;
  max_tokens?: number | null;
  capabilities?: {
    thinking?: { supported?: boolean; types?: Partial<Record<ThinkingType, { supported: boolean } | null>> } | null;
    effort?: ({ supported?: boolean } & Partial<Record<Effort, { supported: boolean } | null>>) | null;
    server_tools?: { web_search?: { supported: boolean } | null } | null;
    image_input?: { supported: boolean } | null;
  } | null;
}

/** Limits a model gets before the catalog lists it: small where unknown, and no feature the API might refuse. */
export const CONSERVATIVE = { contextWindow: 200_000, maxOutput: 8_192, tokenizerRatio: 1.35 } as const;

/**
 * The entry for a model the catalog does not list, from the Models API's answer: its window and
 * max output as stated (conservative figures where it states none), the thinking types and effort
 * levels it says it accepts, and nothing the API could refuse (no prefill, no sampling parameters,
 * no forced tool choice, thinking off only up to effort high); the largest tokenizer ratio known; not priced.
 */
export function entryFromModelInfo(info: ModelInfoLike, readOn: string = utcDay()): ModelEntry {
  const types = info.capabilities?.thinking?.types ?? {};
  const accepts = (["adaptive", "enabled", "disabled", "between_tools"] as const).filter((t) => types[t]?.supported);
  const effortCap = info.capabilities?.effort;
  const levels = effortCap?.supported ? EFFORT_LEVELS.filter((l) => effortCap[l]?.supported) : [];
  const window = info.max_input_tokens ?? CONSERVATIVE.contextWindow;
  const line = (["haiku", "sonnet", "opus", "fable", "mythos"] as const).find((l) => l === info.line) ?? null;
  return {
    id: info.id,
    aliases: [],
    name: info.display_name ?? info.id,
    line,
    status: info.lifecycle === "deprecated" ? "deprecated" : "active",
    ...(info.retires_at ? { retiresOn: info.retires_at.slice(0, 10) } : {}),
    contextWindow: window,
    maxOutput: info.max_tokens ?? CONSERVATIVE.maxOutput,
    thinking: {
      accepts,
      whenOmitted: accepts.includes("adaptive") ? "adaptive" : "off",
      display: "omitted",
      progressInThinking: true,
      prefixBound: true,
      // Thinking off at xhigh or max is a 400 on Opus 5 and later, and the Models API does not say
      // which levels a model allows with it off: a model that can turn it off is held to high.
      ...(accepts.includes("disabled") || accepts.includes("between_tools") ? { offUpToEffort: "high" as const } : {}),
    },
    effort: levels.length ? { levels, default: levels.includes("high") ? "high" : levels[levels.length - 1] } : null,
    prefill: false,
    sampling: false,
    forcedToolChoice: false,
    tokenizerRatio: CONSERVATIVE.tokenizerRatio,
    minCacheTokens: 4_096,
    maxImages: window <= 200_000 ? 100 : 600,
    prices: null,
    // The Models API reports web search (and code execution), never web fetch: only what it reports is offered.
    serverTools: info.capabilities?.server_tools?.web_search?.supported ? ["web_search"] : [],
    sources: [`Anthropic Models API: GET /v1/models/${info.id}, read ${readOn}`],
  };
}

/** The seed's conservative 1.5 chars per token, scaled by how many more tokens the model's tokenizer makes. */
export function charsPerTokenFor(entry: Pick<ModelEntry, "tokenizerRatio">): number {
  return Math.round((1.5 / entry.tokenizerRatio) * 100) / 100;
}

/** Effort levels in order, for "at most" comparisons. */
export function effortRank(level: Effort): number {
  return EFFORT_LEVELS.indexOf(level);
}
