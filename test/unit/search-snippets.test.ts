// The cortex's query words, chunks and snippets as pure functions: a long question keeps its rare
// word, no word is split between two chunks, and a snippet is cut around the real match (marked
// by FTS5 with private-use characters), never around a bracket of the text itself.
import { describe, expect, it } from "vitest";
import { cutSnippet } from "../../agent/tools/memory-search";
import {
  CHUNK_BREAK_WINDOW,
  chunkBodies,
  cutMarkedSnippet,
  INDEX_CHUNK_CHARS,
  MATCH_CLOSE,
  MATCH_OPEN,
  MAX_SEARCH_TERMS,
  queryWords,
  SNIPPET_CHARS,
} from "../../services/cortex/search-index";

const LONG_QUESTION =
  "I was wondering if you could please remind me of what it was that we talked about the other day " +
  "when I told you all about the name that I gave to my zorblatt";

const mark = (word: string) => `${MATCH_OPEN}${word}${MATCH_CLOSE}`;

describe("search query words", () => {
  it("keeps the rare word of a long question: repeats and function words go before the cap", () => {
    expect(LONG_QUESTION.split(" ").length).toBeGreaterThan(32);
    expect(queryWords(LONG_QUESTION)).toContain("zorblatt");
    // The cap still bounds a pathological query, counted in distinct content words.
    const many = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    expect(queryWords(many)).toHaveLength(MAX_SEARCH_TERMS);
    expect(queryWords(`${"the the and ".repeat(40)} kayak`)).toEqual(["kayak"]);
  });
});

describe("index chunks", () => {
  it("end at whitespace so a word across the limit stays whole in one chunk", () => {
    const body = `${"lorem ".repeat(3332)}ab zz INV-77123 quokkazebra`;
    expect(body.indexOf("INV-77123")).toBeLessThan(INDEX_CHUNK_CHARS);
    expect(body.indexOf("INV-77123") + "INV-77123".length).toBeGreaterThan(INDEX_CHUNK_CHARS);
    const chunks = chunkBodies(body);
    expect(chunks.join("")).toBe(body);
    expect(chunks.every((c) => c.length <= INDEX_CHUNK_CHARS)).toBe(true);
    expect(chunks.some((c) => c.includes("INV-77123"))).toBe(true);
  });

  it("fall back to the limit, at a whole character, when the last stretch has no whitespace", () => {
    const body = `a ${"😀".repeat(INDEX_CHUNK_CHARS)}`;
    const chunks = chunkBodies(body);
    expect(chunks.join("")).toBe(body);
    expect(chunks[0].length).toBe(INDEX_CHUNK_CHARS);
    expect(chunks.every((c) => c.isWellFormed() && c.length <= INDEX_CHUNK_CHARS)).toBe(true);
    // Whitespace further back than the window is not used: the chunk stays near the limit.
    const far = `${"x".repeat(INDEX_CHUNK_CHARS - CHUNK_BREAK_WINDOW - 10)} ${"y".repeat(1_000)}`;
    expect(chunkBodies(far)[0].length).toBe(INDEX_CHUNK_CHARS);
    expect(chunkBodies("")).toEqual([""]);
    expect(chunkBodies("short text")).toEqual(["short text"]);
  });
});

describe("snippets", () => {
  it("are cut around the real match, not a bracket of the text, then marked [match] with where it is", () => {
    const marked = `see [1] ${"word ".repeat(100)}the ${mark("zorblatt")} is here ${"tail ".repeat(100)}`;
    const { snippet, matches } = cutMarkedSnippet(marked);
    expect(snippet).toContain("[zorblatt]");
    expect(snippet).not.toContain("[1]");
    expect(matches).toHaveLength(1);
    expect(snippet.slice(matches[0][0], matches[0][1])).toBe("[zorblatt]");
    expect(snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    // cutSnippet (memory_search, pdf_search, the API) cuts a marked snippet the same way.
    expect(cutSnippet(marked)).toBe(snippet);
    // A short one is only marked: a literal bracket stays text and is not a match.
    const short = cutMarkedSnippet(`see [1] and ${mark("zorblatt")}`);
    expect(short.snippet).toBe("see [1] and [zorblatt]");
    expect(short.matches).toEqual([[12, 22]]);
  });

  it("stay within the limit whatever the token length, and never split a pair", () => {
    const huge = `here is the key ${"QUJD".repeat(4000)} for the ${mark("vaultzebra")}`;
    const cut = cutMarkedSnippet(huge);
    expect(cut.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    expect(cut.snippet).toContain("[vaultzebra]");
    const pairs = cutMarkedSnippet(`${"a ".repeat(500)}${mark("match")} ${"😀".repeat(400)}`);
    expect(pairs.snippet.isWellFormed()).toBe(true);
    expect(pairs.snippet.startsWith("…") && pairs.snippet.endsWith("…")).toBe(true);
    expect(pairs.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    // A match longer than the window is shown from its start and closed.
    const long = cutMarkedSnippet(`before ${mark("m".repeat(1000))} after`);
    expect(long.snippet.endsWith("…]")).toBe(true);
    expect(long.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    expect(long.matches).toEqual([[long.snippet.indexOf("["), long.snippet.length]]);
  });
});
