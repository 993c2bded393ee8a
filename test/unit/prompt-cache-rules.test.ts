// The offline model's prompt-cache accounting against Anthropic's documented rules. Each fixture in
// test/fixtures/prompt-cache/ states one rule and its source, and holds requests sent in order with
// the usage (or the 400) the rule implies. Token figures are written as prefixes ("prefix:N" = the
// tokens up to and including the Nth block in tools → system → messages order), so a fixture pins
// WHICH part of the prompt is read or written, whatever the stand-in tokenizer counts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blockPrefixTokens } from "../../core/offline-model/cache";
import { handleMessagesRequest, resetOfflineCache } from "../../core/offline-model";
import type { WireRequest } from "../../core/offline-model/wire";

type Figure = number | string;
interface Step {
  advance_ms?: number;
  request: Record<string, unknown>;
  usage?: { cache_read_input_tokens: Figure; cache_creation_input_tokens: Figure };
  error?: string;
}
interface Fixture {
  rule: string;
  source: string;
  model: string;
  texts: Record<string, { line: string; lines: number }>;
  steps: Step[];
}

const DIR = join(import.meta.dirname, "../fixtures/prompt-cache");
const fixtures = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((name) => [name, JSON.parse(readFileSync(join(DIR, name), "utf8")) as Fixture] as const);

/** "$NAME" strings become the fixture's generated text; everything else is kept, key order included. */
function expand(value: unknown, texts: Fixture["texts"]): unknown {
  if (typeof value === "string" && value.startsWith("$") && texts[value.slice(1)]) {
    const { line, lines } = texts[value.slice(1)];
    return Array.from({ length: lines }, (_, i) => line.replace("{i}", String(i))).join("\n");
  }
  if (Array.isArray(value)) return value.map((v) => expand(v, texts));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, texts)]));
  return value;
}

/** "prefix:4-prefix:1" → tokens of blocks 2..4; plain numbers stand for themselves. */
function figure(expr: Figure, prefixes: number[]): number {
  if (typeof expr === "number") return expr;
  return expr.split("-").reduce((sum, term, i) => {
    const match = /^prefix:(\d+)$/.exec(term);
    if (!match || prefixes[Number(match[1])] === undefined) throw new Error(`bad figure ${expr}`);
    return sum + (i === 0 ? 1 : -1) * prefixes[Number(match[1])];
  }, 0);
}

describe("prompt-cache rules (fixtures derived from Anthropic's prompt-caching docs)", () => {
  it("has a fixture per rule, each naming its source", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(12);
    for (const [, fixture] of fixtures)
      expect(fixture.source).toMatch(/^https:\/\/(docs\.anthropic\.com|platform\.claude\.com)\//);
  });

  for (const [name, fixture] of fixtures) {
    it(`${name}: ${fixture.rule}`, async () => {
      resetOfflineCache();
      let now = 1_800_000_000_000;
      for (const [i, step] of fixture.steps.entries()) {
        now += step.advance_ms ?? 1_000;
        const request = {
          model: fixture.model,
          max_tokens: 64,
          ...(expand(step.request, fixture.texts) as object),
        } as WireRequest;
        // The body goes out exactly as the fixture orders its keys: that order is part of what is tested.
        const body = JSON.stringify(request);
        const response = await handleMessagesRequest(
          new Request("https://offline-model.invalid/v1/messages", { method: "POST", body }),
          { now: () => now },
        );
        const json = (await response.json()) as { usage?: Record<string, number>; error?: { message: string } };
        if (step.error) {
          expect(response.status, `step ${i}`).toBe(400);
          expect(json.error?.message, `step ${i}`).toContain(step.error);
          continue;
        }
        expect(response.status, `step ${i}: ${JSON.stringify(json.error)}`).toBe(200);
        const prefixes = blockPrefixTokens(request);
        const total = prefixes[prefixes.length - 1];
        const read = figure(step.usage!.cache_read_input_tokens, prefixes);
        const created = figure(step.usage!.cache_creation_input_tokens, prefixes);
        expect({
          step: i,
          read: json.usage!.cache_read_input_tokens,
          created: json.usage!.cache_creation_input_tokens,
        }).toEqual({ step: i, read, created });
        expect(json.usage!.input_tokens, `step ${i}`).toBe(total - read - created);
      }
    });
  }
});
