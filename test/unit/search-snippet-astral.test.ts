// A snippet stands the text's own U+E000/U+E001 in for lone low surrogates while it is cut, and
// swaps them back: only those stand-ins, never the second half of a character such as 🐀 (U+1F400,
// whose second half is U+DC00) or U+20001, or the snippet, the tool result stored from it and the
// conversation's export would hold a lone surrogate (an export that no longer imports).
import { describe, expect, it } from "vitest";
import { hitSnippet, MATCH_CLOSE, MATCH_OPEN } from "../../services/cortex/search-index";

describe("a search snippet of characters beyond U+FFFF", () => {
  it("keeps 🐀, 🐁 and U+20001 whole beside the text's own marks and the match", () => {
    const plain = "my pet 🐀 and my 🐁 \u{20001} keep \uE000corp\uE001 with zorblatt";
    const marked = plain.replace("zorblatt", `${MATCH_OPEN}zorblatt${MATCH_CLOSE}`);
    const { snippet, matches } = hitSnippet(marked, plain, ["zorblatt"]);
    expect(snippet.isWellFormed()).toBe(true);
    expect(snippet).toContain("my pet 🐀 and my 🐁 \u{20001} keep \uE000corp\uE001 with");
    expect(matches.map(([start, end]) => snippet.slice(start, end))).toEqual(["[zorblatt]"]);
  });
});
