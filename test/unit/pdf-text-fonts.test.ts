// Page text where the own extractor's font mapping is a guess (built-in encodings of embedded font
// programs) and right-to-left text shown in visual order; real files from pdf.js's test suite.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { visualToLogical } from "../../services/attachments/formats/pdf/bidi";
import { readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/pdf/${name}`, import.meta.url)));
const page1 = async (name: string) =>
  (await readPdfPages(memoryRangeReader(fixture(name)), { from: 1, to: 1 })).pages[0].text;

describe("fonts whose encoding only the font program knows", () => {
  it("reads a TeX font's built-in ligatures through pdf.js, not as StandardEncoding guesses", async () => {
    // CMR9 with no /Encoding: code 11 is "ff" in the font's own encoding, "ﬁ" under a guess.
    const text = await page1("pdfjs--issue3566.pdf");
    expect(text).toContain("different");
    expect(text).not.toContain("ﬁ");
  });
});

describe("right-to-left text", () => {
  it("puts Hebrew shown in visual order back in reading order", async () => {
    const text = await page1("pdfjs--issue11656.pdf");
    expect(text).toContain("שלום עולם");
    expect(text).toContain("כמו כל הילדים");
    expect(text).toContain("לחיוב פעולות אלה לפי סעיף");
  });

  it("reverses only right-to-left runs in a mostly left-to-right line, mirroring brackets", () => {
    expect(visualToLogical("see םולש (abc)")).toBe("see שלום (abc)");
    expect(visualToLogical("(15) ףיעס")).toBe("סעיף (15)");
    expect(visualToLogical("plain text")).toBe("plain text");
  });
});
