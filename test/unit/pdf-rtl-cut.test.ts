// A page cut at the character cap reads on where the cut fell: the cut text is a prefix of the
// whole page's text, also on right-to-left pages, whose lines are reordered before the cut.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TextSink } from "../../services/attachments/formats/pdf/layout";
import { readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";

const rtl = new Uint8Array(readFileSync("test/fixtures/pdf/pdfjs--issue11656.pdf"));

describe("a right-to-left page cut at the cap", () => {
  it("is a prefix of the whole page's text at every cap", async () => {
    const full = (await readPdfPages(memoryRangeReader(rtl), { from: 1, to: 1 })).pages[0].text;
    expect(full).toMatch(/[\u0590-\u08ff]/);
    expect(full.length).toBeGreaterThan(100);
    for (let maxChars = 1; maxChars < full.length; maxChars += 2) {
      const cut = await readPdfPages(memoryRangeReader(rtl), { from: 1, to: 1, maxChars });
      const text = cut.pages[0].text;
      expect(cut.truncated, `maxChars ${maxChars}`).toBe(true);
      expect(text.length, `maxChars ${maxChars}`).toBeLessThanOrEqual(maxChars);
      expect(full.startsWith(text), `maxChars ${maxChars}`).toBe(true);
      // Reading on from where the cut fell gives the rest of the page and nothing twice.
      expect(text + full.slice(text.length)).toBe(full);
    }
  }, 30_000);

  it("a cap at or past the page's length returns it whole, not truncated", async () => {
    const full = (await readPdfPages(memoryRangeReader(rtl), { from: 1, to: 1 })).pages[0].text;
    for (const maxChars of [full.length, full.length + 1]) {
      const out = await readPdfPages(memoryRangeReader(rtl), { from: 1, to: 1, maxChars });
      expect(out.pages[0].text).toBe(full);
    }
  });
});

/**
 * What a page's layout writes into a sink, words, spaces and line breaks in visual order, as the
 * content is read: once the sink is full reading stops, and the glyph that started a new line is
 * still written out.
 */
function write(sink: TextSink, lines: string[][]): string {
  for (const [l, line] of lines.entries()) {
    if (l > 0) sink.lineBreak();
    for (const [i, word] of line.entries()) {
      if (i > 0) sink.space();
      sink.text(word);
      if (sink.full) return sink.result();
    }
  }
  return sink.result();
}

describe("TextSink: lines in reading order, then the cut", () => {
  const hebrew = ["שלום", "עולם", "abc", "123", "(טקסט)", "מימין", "לשמאל"];
  const word = (i: number) => hebrew[(i * 7 + 3) % hebrew.length];
  const page = (words: number, perLine: number) =>
    Array.from({ length: Math.ceil(words / perLine) }, (_, l) =>
      Array.from({ length: Math.min(perLine, words - l * perLine) }, (_, i) => word(l * perLine + i)),
    );

  it("short mixed-direction lines and a line longer than the reordering part are cut as prefixes", () => {
    for (const lines of [page(60, 6), page(3000, 3000), [...page(40, 5), ...page(2500, 2500), ...page(30, 4)]]) {
      const full = write(new TextSink(Number.POSITIVE_INFINITY), lines);
      const caps = [1, 2, 5, 17, 40, 99, 100, 101, 250, 4095, 4096, 4097, 9000, full.length - 1];
      for (const maxChars of caps.filter((c) => c < full.length)) {
        const sink = new TextSink(maxChars);
        const cut = write(sink, lines);
        expect(sink.truncated, `maxChars ${maxChars}`).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(maxChars);
        expect(full.startsWith(cut), `maxChars ${maxChars}`).toBe(true);
      }
      const whole = new TextSink(full.length);
      expect(write(whole, lines)).toBe(full);
      expect(whole.truncated).toBe(false);
    }
  });
});
