// The model catalog against its own invariants and against the pinned SDK's list of models.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_MODEL, MODELS, RETIRED_MODELS } from "../../core/models/catalog";
import { charsPerTokenFor, entryFromModelInfo, findModel } from "../../core/models/lookup";
import { crossCheckSettings, defaultSettings } from "../../core/settings";

/** The ids of the SDK's `Model` union (resources/messages/messages.d.ts). */
function sdkModelIds(): string[] {
  // The package's exports map hides its files: find its folder from the entry point.
  const entry = createRequire(import.meta.url).resolve("@anthropic-ai/sdk");
  const text = readFileSync(join(dirname(entry), "resources/messages/messages.d.ts"), "utf8");
  const union = /export type Model = ([^;]+);/.exec(text)![1];
  return [...union.matchAll(/'([^']+)'/g)].map((m) => m[1]);
}

describe("the model catalog", () => {
  it("lists every model the pinned SDK names, under its id or an alias", () => {
    const known = new Set(MODELS.flatMap((m) => [m.id, ...m.aliases]));
    const missing = sdkModelIds().filter((id) => !known.has(id));
    expect(missing).toEqual([]);
  });

  it("gives every entry a source, unique ids, and a replacement that is in the catalog", () => {
    const ids = [...MODELS, ...RETIRED_MODELS].flatMap((m) => [m.id, ...m.aliases]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of [...MODELS, ...RETIRED_MODELS]) {
      expect(m.sources.length, m.id).toBeGreaterThan(0);
      if (m.replacement)
        expect(
          MODELS.some((e) => e.id === m.replacement),
          `${m.id} -> ${m.replacement}`,
        ).toBe(true);
    }
    for (const m of MODELS) {
      expect(m.maxOutput).toBeLessThanOrEqual(m.contextWindow);
      if (m.effort) expect(m.effort.levels).toContain(m.effort.default);
      if (m.thinking.whenOmitted === "adaptive") expect(m.thinking.accepts).toContain("adaptive");
    }
  });

  it("defaults to Claude Sonnet 5.5, active, with a 1M window and the newer tokenizer", () => {
    const found = findModel(DEFAULT_MODEL, "2026-12-03");
    expect(found.kind).toBe("current");
    if (found.kind !== "current") return;
    expect(found.entry).toMatchObject({
      id: "claude-sonnet-5-5",
      contextWindow: 1_000_000,
      maxOutput: 128_000,
      prefill: false,
      forcedToolChoice: false,
    });
    expect(found.entry.thinking.accepts).toEqual(["adaptive", "between_tools"]);
    expect(charsPerTokenFor(found.entry)).toBe(1.15);
  });

  it("answers a retired model with the model that replaces it, and retires a deprecated one on its day", () => {
    const sonnet45 = findModel("claude-sonnet-4-5-20250929", "2026-12-03");
    expect(sonnet45).toMatchObject({ kind: "retired", id: "claude-sonnet-4-5", retiredOn: "2026-11-30" });
    if (sonnet45.kind === "retired") expect(sonnet45.replacement.id).toBe("claude-sonnet-5-5");
    expect(findModel("claude-opus-4-5", "2027-01-21")).toMatchObject({ kind: "current", status: "deprecated" });
    const later = findModel("claude-opus-4-5", "2027-01-22");
    expect(later.kind).toBe("retired");
    if (later.kind === "retired") expect(later.replacement.id).toBe("claude-opus-5-5");
    expect(findModel("claude-nonexistent-9")).toEqual({ kind: "unknown" });
  });

  it("builds a conservative entry for a model only the Models API knows", () => {
    const entry = entryFromModelInfo({
      id: "claude-sonnet-6",
      display_name: "Claude Sonnet 6",
      lifecycle: "active",
      line: "sonnet",
      max_input_tokens: 2_000_000,
      max_tokens: null,
      capabilities: {
        thinking: { supported: true, types: { adaptive: { supported: true }, disabled: { supported: false } } },
        effort: { supported: true, low: { supported: true }, high: { supported: true } },
      },
    });
    expect(entry).toMatchObject({
      contextWindow: 2_000_000,
      maxOutput: 8_192,
      prefill: false,
      sampling: false,
      forcedToolChoice: false,
      prices: null,
      line: "sonnet",
    });
    expect(entry.thinking.accepts).toEqual(["adaptive"]);
    expect(entry.effort).toEqual({ levels: ["low", "high"], default: "high" });
  });

  it("a Models-API-only model that can turn thinking off is held to effort high with it off", () => {
    const entry = entryFromModelInfo({
      id: "claude-opus-6",
      lifecycle: "active",
      max_input_tokens: 1_000_000,
      max_tokens: 128_000,
      capabilities: {
        thinking: {
          supported: true,
          types: { adaptive: { supported: true }, disabled: { supported: true }, enabled: { supported: false } },
        },
        effort: {
          supported: true,
          low: { supported: true },
          medium: { supported: true },
          high: { supported: true },
          xhigh: { supported: true },
          max: { supported: true },
        },
      },
    });
    expect(entry.thinking.offUpToEffort).toBe("high");
    const off = { ...defaultSettings(entry), thinking: "disabled" as const };
    expect(crossCheckSettings({ ...off, effort: "max" }, entry)).toMatch(/effort/);
    expect(crossCheckSettings({ ...off, effort: "high" }, entry)).toBeNull();
  });
});
