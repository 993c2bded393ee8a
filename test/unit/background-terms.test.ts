// The cortex's background term counts (data/cortex/background-terms.txt): counted over a general
// public chat corpus (Topical-Chat), not over any memory benchmark bench:recall-public reports on,
// in the format the build script writes and the loader reads.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { backgroundTermsText, topicalChatTurns } from "../../scripts/background-terms.mjs";
import {
  BACKGROUND_DOCUMENTS,
  BACKGROUND_HELD_OUT_QUESTIONS,
  BACKGROUND_MIN_DOCUMENT_FREQUENCY,
  BACKGROUND_TERMS,
  parseBackgroundCounts,
} from "../../services/cortex/background-terms";

/** sha256 of the sorted "term count" lines, joined by newlines. */
const COUNTS_SHA256 = "fc775548cb79e0e5724c1ba31f29abd926721bee3a8e77f51275e0d535f9544e";

describe("the background term counts", () => {
  const counts = parseBackgroundCounts(BACKGROUND_TERMS);

  it("come from Topical-Chat, a general chat corpus, and from no evaluation set", () => {
    const header = BACKGROUND_TERMS.split("\n").filter((l) => l.startsWith("#"));
    expect(header.join(" ")).toMatch(/Topical-Chat's conversations .*alexa\/Topical-Chat, CDLA-Sharing-1\.0/);
    expect(header.join(" ")).not.toMatch(/LongMemEval|LoCoMo|REALTALK|RealMem/i);
    // Nothing of an evaluation set is counted, so nothing is held out.
    expect(BACKGROUND_HELD_OUT_QUESTIONS).toBe(0);
  });

  it("are exactly the counts the build wrote", () => {
    const sorted = [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([term, n]) => `${term} ${n}`);
    expect(createHash("sha256").update(sorted.join("\n")).digest("hex")).toBe(COUNTS_SHA256);
    expect([BACKGROUND_DOCUMENTS, BACKGROUND_MIN_DOCUMENT_FREQUENCY]).toEqual([46_903, 5]);
    expect(Math.min(...counts.values())).toBeGreaterThanOrEqual(BACKGROUND_MIN_DOCUMENT_FREQUENCY);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(BACKGROUND_DOCUMENTS);
  });

  it("are in the format scripts/background-terms.mjs writes", () => {
    const sessions = Number(/^@sessions (\d+)$/m.exec(BACKGROUND_TERMS)?.[1]);
    const files = /conversations from (.*)\. No evaluation set/.exec(BACKGROUND_TERMS)?.[1].split(", ") ?? [];
    expect(files).toEqual(["test_freq.json", "test_rare.json", "valid_freq.json", "valid_rare.json"]);
    expect(
      backgroundTermsText({
        documents: BACKGROUND_DOCUMENTS,
        sessions,
        minDf: BACKGROUND_MIN_DOCUMENT_FREQUENCY,
        files,
        counts,
      }),
    ).toBe(BACKGROUND_TERMS);
  });

  it("read every message of Topical-Chat's conversation files as one document", () => {
    const { files, sessions, texts } = topicalChatTurns(join(__dirname, "../fixtures/background-corpus"));
    expect(files).toEqual(["valid_tiny.json"]);
    expect(sessions).toBe(2);
    expect(texts).toEqual(["Do you like jazz?", "I do, mostly old records.", "Football season starts soon."]);
  });

  it("skip comment and metadata lines", () => {
    expect(parseBackgroundCounts("# a comment 1\n@documents 5\nmail 3\n")).toEqual(new Map([["mail", 3]]));
  });
});
