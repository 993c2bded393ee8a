/**
 * Which model a request names, and how it behaves: the catalog entry (core/models) on the current
 * UTC day, or a test model. A retired or unknown id answers 404 `not_found_error` with the message
 * `model: <id>`, as the real API does (https://platform.claude.com/docs/en/about-claude/model-deprecations:
 * requests to retired models fail).
 *
 * Test models `offline-<N>k` (N from 1 to 2000) behave like claude-sonnet-5-5 in every rule, with a
 * window of N×1000 tokens, max output 128,000 and tokenizer ratio 1 (counts equal core/tokens.ts),
 * so tests get small windows. `windows` (an option of the offline model) overrides any model's window.
 */
import { MODELS } from "../models/catalog";
import type { ModelEntry } from "../models/catalog";
import { catalogEntry, findModel, utcDay } from "../models/lookup";

export interface ModelProfile extends ModelEntry {
  /** `id` is the id the request named; the catalog's own id is `bindingKey` (or the template's for a test model). */
  /** Thinking blocks carry this as their producer: test models sign as the model they imitate. */
  bindingKey: string;
  /** True for `offline-<N>k`. */
  test: boolean;
}

export const TEST_MODEL = /^offline-(\d+)k$/;
export const TEST_MODEL_TEMPLATE = "claude-sonnet-5-5";
export const MAX_TEST_MODEL_K = 2_000;

/** The catalog entry a test model imitates. */
export function templateEntry(): ModelEntry {
  return catalogEntry(TEST_MODEL_TEMPLATE) ?? MODELS[0];
}

export function testModelEntry(id: string): ModelEntry | null {
  const match = TEST_MODEL.exec(id);
  const k = match ? Number(match[1]) : 0;
  if (!match || k < 1 || k > MAX_TEST_MODEL_K || String(k) !== match[1]) return null;
  const template = templateEntry();
  return {
    ...template,
    id,
    aliases: [],
    name: `Offline test model (${k}K window)`,
    status: "active",
    contextWindow: k * 1000,
    maxOutput: 128_000,
    tokenizerRatio: 1,
    maxImages: k * 1000 <= 200_000 ? 100 : 600,
    prices: null,
    sources: [`offline model: behaves like ${template.id}, window ${k}K`],
  };
}

/** The model a request names on `day`, or null when it is retired or unknown. */
export function resolveModel(
  id: string,
  day: string = utcDay(),
  windows?: Record<string, number>,
): ModelProfile | null {
  const test = testModelEntry(id);
  let entry: ModelEntry | null = test;
  if (!entry) {
    const found = findModel(id, day);
    if (found.kind !== "current") return null;
    entry = found.entry;
  }
  const window = windows?.[id];
  return {
    ...entry,
    // Answers and messages name the model as the request did (a dated snapshot id stays dated).
    id,
    ...(window !== undefined ? { contextWindow: window } : {}),
    bindingKey: test ? TEST_MODEL_TEMPLATE : entry.id,
    test: test !== null,
  };
}
