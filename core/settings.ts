// Per-conversation settings: the seed's numbers as defaults, each visible and changeable
// through the API. Unknown keys and out-of-range values are rejected (400), never ignored.
import { z } from "zod";

export const DEFAULT_SETTINGS = {
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
  model: "claude-sonnet-4-5",
  contextWindowTokens: 200_000,
  outputReserveTokens: 8_192,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
  maxToolIterations: 24,
  // How long a paused turn waits for its client tools' results before it ends with interrupted-call
  // results: long enough for a person answering by hand, short enough not to hold the turn all day.
  clientToolTimeoutSeconds: 600,
} as const;

export type Settings = {
  -readonly [K in keyof typeof DEFAULT_SETTINGS]: (typeof DEFAULT_SETTINGS)[K] extends string ? string : number;
};

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** Every key optional: used for create (merged over defaults) and for patch (merged over current). */
export const settingsPatchSchema = z
  .strictObject({
    foldThresholdChars: int(1_000, 50_000_000),
    tailMessages: int(2, 500),
    summaryMaxChars: int(200, 100_000),
    stubMinChars: int(100, 10_000_000),
    stubAfterExchanges: int(1, 1_000),
    stubBatchChars: int(0, 10_000_000),
    model: z.string().min(1).max(100).regex(/^[A-Za-z0-9._:@-]+$/, "letters, digits and . _ : @ - only"),
    contextWindowTokens: int(1_000, 10_000_000),
    outputReserveTokens: int(64, 1_000_000),
    compactTriggerRatio: z.number().gt(0).max(1),
    compactTargetRatio: z.number().gt(0).lt(1),
    charsPerToken: z.number().min(0.25).max(20),
    maxToolIterations: int(1, 200),
    clientToolTimeoutSeconds: int(1, 86_400),
  })
  .partial();

export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/** Cross-field rules that a single field's range cannot express. Returns an error message or null. */
export function crossCheckSettings(s: Settings): string | null {
  if (s.outputReserveTokens >= s.contextWindowTokens)
    return "settings.outputReserveTokens: must be smaller than settings.contextWindowTokens";
  if (s.compactTargetRatio >= s.compactTriggerRatio)
    return "settings.compactTargetRatio: must be smaller than settings.compactTriggerRatio";
  return null;
}

export function mergeSettings(base: Settings, patch: SettingsPatch | undefined): Settings {
  const merged = { ...base };
  for (const [k, v] of Object.entries(patch ?? {})) if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  return merged;
}

export function defaultSettings(model?: string): Settings {
  return { ...DEFAULT_SETTINGS, ...(model ? { model } : {}) };
}
