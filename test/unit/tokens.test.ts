import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import {
  countRequestTokens,
  countTokens,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  truncateToTokens,
} from "../../core/tokens";

describe("countTokens (cl100k_base stand-in)", () => {
  it("matches known cl100k_base counts, so a real BPE is in use", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("The quick brown fox jumps over the lazy dog.")).toBe(10);
    expect(countTokens("tiktoken is great!")).toBe(6);
  });

  it("treats special-token text in user content as plain text instead of throwing", () => {
    expect(countTokens("before <|endoftext|> after")).toBeGreaterThan(3);
  });

  it("memoizes long strings without confusing different strings of equal length", () => {
    const spaced = "ab ".repeat(2_000); // > 2 KB: keyed by hash
    const dense = "abc".repeat(2_000);
    const first = countTokens(spaced);
    expect(countTokens(spaced)).toBe(first);
    expect(countTokens(dense)).not.toBe(first);
    const medium = " word".repeat(100); // 500 chars: keyed by its hash, as every memoized string is
    expect(countTokens(medium)).toBe(countTokens(" word".repeat(100)));
    expect(countTokens(medium)).toBe(100);
  });

  // Counted in bounded pieces, so the BPE's quadratic merge never sees the whole run (its time is
  // the benches' to measure, not a test's: a slow machine would fail a timed test).
  it("counts a 40 KB run without whitespace", () => {
    let run = "";
    for (let i = 0; run.length < 40_000; i++)
      run += "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[(i * 7919) % 52];
    const count = countTokens(run);
    expect(count).toBeGreaterThan(20_000);
    expect(count).toBeLessThan(40_000);
  });

  // A 256-letter piece cost the BPE ~12 ms, so a 256 KiB run of letters took seconds to count on
  // every request that carried it: such runs are counted in 32-character slices.
  it("counts a run of letters, of punctuation or of whitespace past 32 characters as its 32-character slices", () => {
    const slices = (run: string) => run.match(/[\s\S]{1,32}/g)!.reduce((sum, slice) => sum + countTokens(slice), 0);
    const word = "Donaudampfschifffahrtsgesellschaftskapitaenswitwe"; // 49 letters
    const letters = `${word}${word}`.slice(0, 96);
    const dashes = "-=".repeat(40);
    const gap = ` ${" \t".repeat(30)}`;
    for (const run of [letters, dashes, gap])
      expect(countTokens(`a1${run}`), JSON.stringify(run)).toBe(countTokens("a1") + slices(run));
    // A run of digits is already cut into pieces of three by cl100k's pre-tokenizer: counted whole.
    expect(countTokens("1".repeat(90))).toBe(30);
  });

  it("counts long runs of whitespace alone in bounded pieces too (a row padded with 16,383 tabs)", () => {
    const tabs = `a${"\t".repeat(16_383)}b`;
    const count = countTokens(tabs);
    expect(count).toBeGreaterThan(16_383 / 256);
    expect(count).toBeLessThan(16_383);
    expect(countTokens(`x${" ".repeat(50_000)}y\n`)).toBeGreaterThan(0);
    // About 2 s alone; the suite runs it beside the other projects. The fault this guards took minutes.
  }, 30_000);
});

describe("truncateToTokens", () => {
  it("returns the longest prefix that fits", () => {
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
    const cut = truncateToTokens(text, 15);
    expect(text.startsWith(cut)).toBe(true);
    expect(countTokens(cut)).toBeLessThanOrEqual(15);
    expect(countTokens(cut)).toBeGreaterThanOrEqual(14);
    expect(truncateToTokens("short", 100)).toBe("short");
    expect(truncateToTokens("short", 0)).toBe("");
  });
});

describe("truncateToTokens on characters beyond U+FFFF", () => {
  // Shaving a prefix one UTF-16 unit at a time could stop between a pair's halves, and the stand-in's
  // reply cut at max_tokens then ended in a lone surrogate (stored, it makes the export unimportable).
  it("never ends inside a surrogate pair (seeded mixed-script texts, runs of up to 80 of a character)", () => {
    const alphabet = [
      "a",
      "b",
      "Z",
      "é",
      "中",
      "文",
      "𠀀",
      "𝐀",
      "😀",
      "👍🏽",
      "-",
      "=",
      ".",
      "!",
      " ",
      "  ",
      "\n",
      "\t",
      "1",
      "9",
      "\u0301",
      "'s",
      "\uFFFD",
    ];
    let seed = 12_345;
    const rnd = () => {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let k = 0; k < 60; k++) {
      let text = "";
      for (let len = 20 + Math.floor(rnd() * 900); text.length < len; ) {
        const ch = alphabet[Math.floor(rnd() * alphabet.length)];
        text += ch.repeat(rnd() < 0.3 ? 1 + Math.floor(rnd() * 80) : 1);
      }
      const max = 1 + Math.floor(rnd() * countTokens(text));
      const cut = truncateToTokens(text, max);
      expect(cut.isWellFormed(), `text ${k} at ${max} tokens`).toBe(true);
      expect(text.startsWith(cut)).toBe(true);
      expect(countTokens(cut)).toBeLessThanOrEqual(max);
    }
  });
});

describe("countRequestTokens", () => {
  it("follows the documented formula", () => {
    const request = {
      system: "You are terse.",
      tools: [{ name: "read_file", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: "hello world" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Reading." },
            { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.ts" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "file body here" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          ],
        },
      ],
    };
    const expected =
      countTokens(JSON.stringify({ name: "read_file", input_schema: { type: "object" } })) +
      countTokens("You are terse.") +
      (MESSAGE_OVERHEAD_TOKENS + countTokens("hello world")) +
      (MESSAGE_OVERHEAD_TOKENS + countTokens("Reading.") + countTokens("read_file") + countTokens('{"path":"a.ts"}')) +
      (MESSAGE_OVERHEAD_TOKENS + countTokens("file body here") + IMAGE_TOKENS);
    expect(countRequestTokens(request)).toBe(expected);
  });

  it("ignores cache_control markers and accepts system text blocks", () => {
    const plain = {
      system: [{ type: "text", text: "Rules." }],
      tools: [{ name: "t", input_schema: {} }],
      messages: [{ role: "user", content: "hi" }],
    };
    const marked = {
      system: [{ type: "text", text: "Rules.", cache_control: { type: "ephemeral" } }],
      tools: [{ name: "t", input_schema: {}, cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "hi" }],
    };
    expect(countRequestTokens(marked)).toBe(countRequestTokens(plain));
    expect(countRequestTokens(plain)).toBe(
      countTokens('{"name":"t","input_schema":{}}') + countTokens("Rules.") + MESSAGE_OVERHEAD_TOKENS + 1,
    );
  });

  it("accepts the SDK's own request params type", () => {
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: "offline",
      max_tokens: 10,
      system: [{ type: "text", text: "abc" }],
      messages: [{ role: "user", content: [{ type: "text", text: "hello world" }] }],
    };
    expect(countRequestTokens(params)).toBe(countTokens("abc") + MESSAGE_OVERHEAD_TOKENS + 2);
  });
});
