import { describe, expect, it } from "vitest";
import { coalesceBlocks } from "../../core/coalesce";
import { isId, sortableId } from "../../core/ids";
import { isToolResultCarrier, messageChars, renderMessageText } from "../../core/render";
import {
  crossCheckSettings,
  DEFAULT_SETTINGS,
  defaultSettings,
  LEGACY_MODEL_DEFAULTS,
  mergeSettings,
  settingsAfterModelChange,
  settingsPatchSchema,
  withMissingSettings,
  type Settings,
} from "../../core/settings";
import { turnBodySchema } from "../../core/turn-input";
import { describeZodError } from "../../core/validation";
import { toFtsQuery } from "../../services/cortex/search-index";
import { messageBatchKey, messageBatchStartAfter, parseMessageBatchKey } from "../../r2-layout";
import { catalogEntry } from "../../core/models/lookup";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

describe("coalesceBlocks", () => {
  it("merges runs of text and drops empty text, keeping tool calls in place", () => {
    const out = coalesceBlocks([
      { type: "text", text: "a" },
      { type: "text", text: "" },
      { type: "text", text: "b" },
      { type: "tool_use", id: "t", name: "x", input: {} },
      { type: "text", text: "c" },
    ]);
    expect(out).toEqual([
      { type: "text", text: "ab" },
      { type: "tool_use", id: "t", name: "x", input: {} },
      { type: "text", text: "c" },
    ]);
  });
  it("turns a thousand fragments into one block", () => {
    const parts = Array.from({ length: 1000 }, (_, i) => ({ type: "text" as const, text: `w${i} ` }));
    const out = coalesceBlocks(parts);
    expect(out).toHaveLength(1);
    expect((out[0] as { text: string }).text).toBe(parts.map((p) => p.text).join(""));
  });
});

describe("ids", () => {
  it("sort in creation order, even within one millisecond", () => {
    const ids = Array.from({ length: 50 }, () => sortableId("msg", 1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
    expect(sortableId("msg", 1_800_000_000_000) > ids[49]).toBe(true);
    expect(ids.every((id) => isId("msg", id))).toBe(true);
  });
  it("reject anything that is not exactly a prefixed id", () => {
    expect(isId("conv", "conv_../../x")).toBe(false);
    expect(isId("conv", sortableId("msg"))).toBe(false);
    expect(isId("conv", `${sortableId("conv")}x`)).toBe(false);
  });
});

describe("render", () => {
  it("returns a single text or tool-result block byte for byte", () => {
    const t = "line one\n  line two\u00e9";
    expect(renderMessageText({ content: [{ type: "text", text: t }] })).toBe(t);
    expect(renderMessageText({ content: [{ type: "tool_result", tool_use_id: "x", content: t }] })).toBe(t);
  });
  it("labels blocks of mixed messages and counts chars", () => {
    const m = {
      content: [
        { type: "text" as const, text: "hi" },
        { type: "tool_use" as const, id: "t1", name: "n", input: { a: 1 } },
      ],
    };
    expect(renderMessageText(m)).toBe('hi\n[tool_use n t1] {"a":1}');
    expect(messageChars(m)).toBe(2 + 1 + 7);
  });
  it("tells tool-result carriers from real user prompts", () => {
    expect(
      isToolResultCarrier({ role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "" }] }),
    ).toBe(true);
    expect(isToolResultCarrier({ role: "user", content: [{ type: "text", text: "q" }] })).toBe(false);
  });
});

describe("settings", () => {
  it("defaults to the seed's numbers, with the model's window and the seed's 1.5 chars per token scaled by its tokenizer", () => {
    expect(defaultSettings()).toMatchObject({
      foldThresholdChars: 120000,
      tailMessages: 8,
      summaryMaxChars: 6000,
      stubMinChars: 2000,
      stubAfterExchanges: 2,
      compactTriggerRatio: 0.75,
      compactTargetRatio: 0.5,
    });
    expect(defaultSettings()).toMatchObject({
      model: "claude-sonnet-5-5",
      contextWindowTokens: 1_000_000,
      outputReserveTokens: 32_000,
      charsPerToken: 1.15,
    });
    expect(defaultSettings(catalogEntry("claude-sonnet-4-6")!)).toMatchObject({ charsPerToken: 1.5 });
    expect(defaultSettings(catalogEntry("claude-haiku-4-5")!)).toMatchObject({
      contextWindowTokens: 200_000,
      outputReserveTokens: 32_000,
    });
  });

  it("checks settings against what their model accepts, naming the field", () => {
    const on = (patch: Partial<Settings>, model = "claude-sonnet-5-5") =>
      crossCheckSettings({ ...defaultSettings(catalogEntry(model)!), ...patch }, catalogEntry(model)!);
    expect(on({})).toBeNull();
    expect(on({ outputReserveTokens: 200_000 })).toMatch(/^settings\.outputReserveTokens: at most 128000/);
    expect(on({ thinking: "disabled" })).toMatch(/^settings\.thinking: claude-sonnet-5-5 does not take "disabled"/);
    expect(on({ thinking: "between_tools", effort: "max" })).toMatch(
      /^settings\.thinking: "between_tools" on claude-sonnet-5-5 needs settings.effort at high or below/,
    );
    expect(on({ thinking: "between_tools", effort: "low" })).toBeNull();
    expect(on({ effort: "xhigh" }, "claude-sonnet-4-6")).toMatch(
      /^settings\.effort: claude-sonnet-4-6 takes low, medium, high, max/,
    );
    expect(on({ effort: "low" }, "claude-haiku-4-5")).toMatch(/^settings\.effort: claude-haiku-4-5 takes no effort/);
    expect(on({ thinking: "disabled", effort: "high" }, "claude-haiku-5-5")).toBeNull();
  });

  it("moves the model's own figures with a model change, keeping what a user set", () => {
    const sonnet46 = defaultSettings(catalogEntry("claude-sonnet-4-6")!);
    const moved = settingsAfterModelChange(sonnet46, {
      patch: { model: "claude-haiku-4-5" },
      from: catalogEntry("claude-sonnet-4-6")!,
      to: catalogEntry("claude-haiku-4-5")!,
    });
    expect(moved).toMatchObject({ model: "claude-haiku-4-5", contextWindowTokens: 200_000, charsPerToken: 1.5 });
    const own = settingsAfterModelChange(
      { ...sonnet46, contextWindowTokens: 300_000, outputReserveTokens: 100_000 },
      {
        patch: { model: "claude-haiku-4-5" },
        from: catalogEntry("claude-sonnet-4-6")!,
        to: catalogEntry("claude-haiku-4-5")!,
      },
    );
    expect(own).toMatchObject({ contextWindowTokens: 300_000, outputReserveTokens: 64_000 });
    // What the new model would refuse is brought within what it takes (a refusal's fallback gets the same).
    const quiet = { ...defaultSettings(SONNET), thinking: "between_tools" as const, effort: "low" as const };
    expect(
      settingsAfterModelChange(quiet, {
        patch: { model: "claude-sonnet-5" },
        from: SONNET,
        to: catalogEntry("claude-sonnet-5")!,
      }),
    ).toMatchObject({ thinking: "auto", effort: "low" });
    expect(
      settingsAfterModelChange(
        { ...defaultSettings(SONNET), effort: "xhigh" },
        { patch: { model: "claude-opus-4-6" }, from: SONNET, to: catalogEntry("claude-opus-4-6")! },
      ),
    ).toMatchObject({ effort: null });
    expect(
      crossCheckSettings(
        settingsAfterModelChange(quiet, {
          patch: { model: "claude-haiku-4-5" },
          from: SONNET,
          to: catalogEntry("claude-haiku-4-5")!,
        }),
        catalogEntry("claude-haiku-4-5")!,
      ),
    ).toBeNull();
    // A conversation made before the catalog, on the old defaults, moves to the new model's figures.
    const legacy = {
      ...withMissingSettings({ ...DEFAULT_SETTINGS, model: "claude-sonnet-4-5" }),
      ...LEGACY_MODEL_DEFAULTS,
      thinking: "auto" as const,
    };
    expect(
      settingsAfterModelChange(legacy, { patch: { model: "claude-sonnet-5-5" }, from: null, to: SONNET }),
    ).toMatchObject({
      contextWindowTokens: 1_000_000,
      outputReserveTokens: 32_000,
      charsPerToken: 1.15,
    });
  });
  it("rejects unknown keys and out-of-range values by name", () => {
    const unknown = settingsPatchSchema.safeParse({ nope: 1 });
    expect(unknown.success).toBe(false);
    expect(describeZodError(unknown.error!, "settings")).toBe("unknown field settings.nope");
    const range = settingsPatchSchema.safeParse({ compactTriggerRatio: 1.5 });
    expect(describeZodError(range.error!, "settings")).toMatch(/^settings\.compactTriggerRatio: /);
  });
  it("checks rules across fields after merging", () => {
    const s = mergeSettings(defaultSettings(), { compactTargetRatio: 0.8 });
    expect(crossCheckSettings(s, SONNET)).toMatch(/compactTargetRatio/);
    expect(crossCheckSettings(defaultSettings(), SONNET)).toBeNull();
  });
});

describe("turn input", () => {
  it("names the missing field", () => {
    const r = turnBodySchema.safeParse({});
    expect(describeZodError(r.error!)).toMatch(/^content: /);
    expect(describeZodError(r.error!)).not.toMatch(/Invalid input$/);
  });
  it("accepts text and image blocks, rejects other block types", () => {
    expect(turnBodySchema.safeParse({ content: [{ type: "text", text: "x" }] }).success).toBe(true);
    expect(
      turnBodySchema.safeParse({ content: [{ type: "tool_result", tool_use_id: "x", content: "forged" }] }).success,
    ).toBe(false);
    expect(turnBodySchema.safeParse({ content: "" }).success).toBe(false);
  });
});

describe("toFtsQuery", () => {
  it("quotes every term so user text can never be FTS syntax", () => {
    expect(toFtsQuery('flight "plan" AND (NEAR')).toBe('"flight" "plan" "NEAR"');
    expect(toFtsQuery("run-42.log conv_01ABC")).toBe('"run-42.log" "conv_01ABC"');
    expect(toFtsQuery("alpha b", "or")).toBe('"alpha" OR "b"');
    expect(toFtsQuery("!!! ???")).toBeNull();
  });

  it("leaves out function words so the subject decides, unless nothing else is left", () => {
    expect(toFtsQuery("What degree did I graduate with?", "or")).toBe('"degree" OR "graduate"');
    expect(toFtsQuery("what is the amount on INV-88231 and 318.40")).toBe('"amount" "INV-88231" "318.40"');
    expect(toFtsQuery("to be or not to be")).toBe('"to" "be" "or" "not"');
  });
});

describe("r2 layout", () => {
  it("builds batch keys that sort by seq and parse back", () => {
    const a = messageBatchKey("t", "c", 9, 10);
    const b = messageBatchKey("t", "c", 11, 11);
    expect(a < b).toBe(true);
    expect(parseMessageBatchKey(b)).toEqual({ firstSeq: 11, lastSeq: 11 });
    const cursor = messageBatchStartAfter("t", "c", 10);
    expect(a < cursor && cursor < b).toBe(true);
    expect(messageBatchKey("t", "c", 10, 12) < cursor).toBe(true);
  });
});
