// The cortex's background term counts (data/cortex/background-terms.txt): counted over general
// public dialogue corpora (Topical-Chat and the Schema-Guided Dialogue dataset), not over any memory
// benchmark bench:recall-public reports on, in the format the build script writes and the loader reads.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { backgroundTermsText, corpusTurns } from "../../scripts/background-terms.mjs";
import {
  BACKGROUND_DOCUMENTS,
  BACKGROUND_HELD_OUT_QUESTIONS,
  BACKGROUND_MIN_DOCUMENT_FREQUENCY,
  BACKGROUND_TERMS,
  parseBackgroundCounts,
} from "../../services/cortex/background-terms";

/** sha256 of the sorted "term count" lines, joined by newlines. */
const COUNTS_SHA256 = "467fc110bbbfc3bec720fefd405cb5b2bbfcb661eca6e3e126d69b2c8d9082c9";

describe("the background term counts", () => {
  const counts = parseBackgroundCounts(BACKGROUND_TERMS);

  it("come from general dialogue corpora, and from no evaluation set", () => {
    const header = BACKGROUND_TERMS.split("\n").filter((l) => l.startsWith("#"));
    expect(header.join(" ")).toMatch(/alexa\/Topical-Chat, CDLA-Sharing-1\.0/);
    expect(header.join(" ")).toMatch(/dstc8-schema-guided-dialogue, CC BY-SA 4\.0/);
    expect(header.join(" ")).not.toMatch(/LongMemEval|LoCoMo|REALTALK|RealMem/i);
    // Nothing of an evaluation set is counted, so nothing is held out.
    expect(BACKGROUND_HELD_OUT_QUESTIONS).toBe(0);
  });

  it("are exactly the counts the build wrote", () => {
    const sorted = [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([term, n]) => `${term} ${n}`);
    expect(createHash("sha256").update(sorted.join("\n")).digest("hex")).toBe(COUNTS_SHA256);
    expect([BACKGROUND_DOCUMENTS, BACKGROUND_MIN_DOCUMENT_FREQUENCY, counts.size]).toEqual([359_151, 5, 9_369]);
    expect(Math.min(...counts.values())).toBeGreaterThanOrEqual(BACKGROUND_MIN_DOCUMENT_FREQUENCY);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(BACKGROUND_DOCUMENTS);
  });

  it("are in the format scripts/background-terms.mjs writes", () => {
    const sessions = Number(/^@sessions (\d+)$/m.exec(BACKGROUND_TERMS)?.[1]);
    const files = Number(/dialogues from (\d+) files/.exec(BACKGROUND_TERMS)?.[1]);
    expect(files).toBe(141);
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

  it("read every turn of both corpora's files, each in its own format, as one document", () => {
    const { files, sessions, texts } = corpusTurns(join(__dirname, "../fixtures/background-corpus"));
    // SGD's schema.json holds no dialogue and is skipped.
    expect(files).toEqual(["sgd/dialogues_001.json", "topical-chat/valid_tiny.json"]);
    expect(sessions).toBe(3);
    expect(texts).toEqual([
      "Play something calm, please.",
      "Here is a quiet piano album.",
      "Do you like jazz?",
      "I do, mostly old records.",
      "Football season starts soon.",
    ]);
  });

  it("skip comment and metadata lines", () => {
    expect(parseBackgroundCounts("# a comment 1\n@documents 5\nmail 3\n")).toEqual(new Map([["mail", 3]]));
  });
});
