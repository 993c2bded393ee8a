// The cortex's background counts moved from a TypeScript string into data/cortex/background-terms.txt
// (a Text module): the same 13,415 counts, byte for byte, and the build script writes the format
// the loader reads.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { backgroundTermsText } from "../../scripts/background-terms.mjs";
import {
  BACKGROUND_DOCUMENTS,
  BACKGROUND_HELD_OUT_QUESTIONS,
  BACKGROUND_MIN_DOCUMENT_FREQUENCY,
  BACKGROUND_TERMS,
  parseBackgroundCounts,
} from "../../services/cortex/background-terms";

/** sha256 of the sorted "term count" lines, joined by newlines, as the TypeScript file held them. */
const COUNTS_SHA256 = "f9e3cf97d0943569cc2c8d3b71dc5d703374d1301bc33bf1df4adb61e71675c6";

describe("the background term counts", () => {
  const counts = parseBackgroundCounts(BACKGROUND_TERMS);

  it("are exactly the counts the TypeScript module held", () => {
    const sorted = [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([term, n]) => `${term} ${n}`);
    expect(counts.size).toBe(13_415);
    expect(createHash("sha256").update(sorted.join("\n")).digest("hex")).toBe(COUNTS_SHA256);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(11_222_604);
    expect([BACKGROUND_DOCUMENTS, BACKGROUND_MIN_DOCUMENT_FREQUENCY, BACKGROUND_HELD_OUT_QUESTIONS]).toEqual([
      141_831, 20, 100,
    ]);
  });

  it("are in the format scripts/background-terms.mjs writes", () => {
    const sessions = Number(/^@sessions (\d+)$/m.exec(BACKGROUND_TERMS)?.[1]);
    expect(
      backgroundTermsText({
        documents: BACKGROUND_DOCUMENTS,
        sessions,
        minDf: BACKGROUND_MIN_DOCUMENT_FREQUENCY,
        holdOut: BACKGROUND_HELD_OUT_QUESTIONS,
        counts,
      }),
    ).toBe(BACKGROUND_TERMS);
  });

  it("skip comment and metadata lines", () => {
    expect(parseBackgroundCounts("# a comment 1\n@documents 5\nmail 3\n")).toEqual(new Map([["mail", 3]]));
  });
});
