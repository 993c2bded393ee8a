// Bad input to the PDF reader: garbage, truncation, broken cross-references, hostile nesting and
// fuzzed files all end as a PdfError, quickly and with bounded reads.
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { PdfError, probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { buildPdf, concat, kumquatPdf, latin1, pdfError, text } from "./pdf-builders";

/** Deterministic PRNG for fuzzing. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
}

// Bounded reads, not time, are what a test holds here: a test timed on a loaded machine fails for
// the machine (a loop on hostile input still fails, by the project's 30 s test timeout).
describe("bad input is a PdfError, with bounded reads", () => {
  const quick = async (bytes: Uint8Array, pattern: RegExp) => {
    const r = memoryRangeReader(bytes);
    expect((await pdfError(probePdf(r))).message).toMatch(pattern);
    expect((await pdfError(readPdfPages(memoryRangeReader(bytes), { from: 1, to: 1 }))).message).toMatch(pattern);
    return r;
  };

  it("%PDF-1.7 garbage: no startxref", async () => {
    await quick(latin1("%PDF-1.7 garbage"), /no startxref at the end of the file/);
  });

  it("random bytes: not a PDF", async () => {
    const rand = prng(7);
    const r = await quick(
      new Uint8Array(1 << 20).map(() => Math.floor(rand() * 256)),
      /^not a PDF/,
    );
    // The first 1 KB and at most 16 KB of tail: like pdf.js, no header alone does not refuse a
    // file, no "startxref" at its end does.
    expect(r.bytesRead).toBeLessThanOrEqual(1024 + 16 * 1024);
  });

  it("an empty file: not a PDF", async () => {
    await quick(new Uint8Array(0), /^not a PDF/);
  });

  it("startxref pointing at garbage: broken cross-reference data", async () => {
    await quick(latin1("%PDF-1.4\nhello there general kenobi\nstartxref\n12\n%%EOF\n"), /broken cross-reference/);
  });

  it("startxref past the end: garbled", async () => {
    await quick(latin1("%PDF-1.4\n1 0 obj << >> endobj\nstartxref\n99999\n%%EOF\n"), /garbled startxref/);
  });

  it("a classic table that ends before its trailer, and a bad entry", async () => {
    const good = buildPdf(
      { 1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [] /Count 0 >>" },
      { root: 1 },
    );
    // The own reader refuses both; pdf.js rebuilds the xref of the second by scanning and says so,
    // while the first has no trailer and so no /Root for anyone: the own reader's error stands.
    const noTrailer = latin1(text(good).replace(/trailer[\s\S]*startxref/, "startxref"));
    expect((await pdfError(probePdf(memoryRangeReader(noTrailer)))).message).toMatch(/broken cross-reference/);
    const badEntry = latin1(text(good).replace(/\n(\d{10}) 00000 n \n(trailer)/, "\nxxxxxxxxxx 00000 n \n$2"));
    expect(await probePdf(memoryRangeReader(badEntry))).toMatchObject({ pageCount: 0, pageCountSource: "pdfjs" });
  });

  it("deeply nested objects and a page tree cycle", async () => {
    const deep = buildPdf(
      { 1: `<< /Type /Catalog /Pages 2 0 R /X ${"[".repeat(5000)} >>`, 2: "<< /Type /Pages /Kids [] /Count 0 >>" },
      { root: 1 },
    );
    await quick(deep, /too deep/);
    const cycle = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 5 >>",
        3: "<< /Type /Pages /Kids [2 0 R] /Count 5 >>",
      },
      { root: 1 },
    );
    expect((await pdfError(readPdfPages(memoryRangeReader(cycle), { from: 1, to: 1 }))).message).toMatch(
      /page tree|Pages tree/,
    );
  });

  it("a missing page object never shifts the pages after it (page 3's text is never page 2's)", async () => {
    const page = (content: number) =>
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 3 0 R >> >> /Contents ${content} 0 R >>`;
    const stream = (words: string) => {
      const ops = `BT /F1 12 Tf 20 100 Td (${words}) Tj ET`;
      return `<< /Length ${ops.length} >>\nstream\n${ops}\nendstream`;
    };
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [4 0 R 99 0 R 6 0 R] /Count 3 >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: page(5),
        5: stream("alpha page one"),
        6: page(7),
        7: stream("gamma page three"),
      },
      { root: 1 },
    );
    const second = await readPdfPages(memoryRangeReader(pdf), { from: 2, to: 2 }).catch((e: unknown) => e);
    if (second instanceof Error) expect(second).toBeInstanceOf(PdfError);
    else expect(JSON.stringify(second)).not.toMatch(/gamma/);
  });

  it("a page no reader can read: an error for pdf_read, an empty page for the search index's chunk", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        // The third kid is an object the file does not hold: no reader can read that page.
        2: "<< /Type /Pages /Kids [3 0 R 4 0 R 9 0 R] /Count 3 >>",
        3: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] >>",
        4: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] >>",
      },
      { root: 1 },
    );
    expect(await pdfError(readPdfPages(memoryRangeReader(pdf), { from: 1, to: 3 }))).toBeInstanceOf(PdfError);
    const chunk = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 3, skipUnreadable: true });
    expect(chunk.pages).toEqual([
      { page: 1, text: "" },
      { page: 2, text: "" },
      { page: 3, text: "" },
    ]);
  });

  it("a page the own reader reads in part, in a file too large for pdf.js: the words it has", async () => {
    const ops = "BT /F1 12 Tf 20 150 Td (latin words here) Tj ET BT /F2 12 Tf 20 100 Td <0041> Tj ET";
    const pad = new Uint8Array(49 * 1024 * 1024).fill(0x20);
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 7 0 R >>",
        4: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        5: "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
        6: "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /X /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>",
        7: `<< /Length ${ops.length} >>\nstream\n${ops}\nendstream`,
        8: concat([latin1(`<< /Length ${pad.length} >>\nstream\n`), pad, latin1("\nendstream")]),
      },
      { root: 1 },
    );
    const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 });
    expect(read.pages[0].text).toContain("latin words here");
  });

  it("a failing reader surfaces its own error, not a PdfError", async () => {
    const pdf = await kumquatPdf(1, true);
    const good = memoryRangeReader(pdf);
    let calls = 0;
    const flaky = {
      size: pdf.length,
      read: async (o: number, l: number) =>
        ++calls > 3 ? Promise.reject(new TypeError("R2 is down")) : good.read(o, l),
    };
    const err = await probePdf(flaky).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(PdfError);
    expect((err as Error).message).toBe("R2 is down");
  });

  it("an invalid range is a PdfError", async () => {
    const pdf = await kumquatPdf(2, true);
    expect((await pdfError(readPdfPages(memoryRangeReader(pdf), { from: 0, to: 1 }))).message).toMatch(
      /invalid page range/,
    );
    expect((await pdfError(readPdfPages(memoryRangeReader(pdf), { from: 2, to: 1 }))).message).toMatch(
      /invalid page range/,
    );
    expect((await pdfError(readPdfPages(memoryRangeReader(pdf), { from: 3, to: 3 }))).message).toBe(
      "page 3 is past the end: the document has 2 pages",
    );
  });

  it("fuzzed files (flipped bytes, cut tails, spliced middles) succeed or fail with a PdfError", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 12; i++) doc.addPage([200, 200]).drawText(`fuzz page ${i}`, { x: 10, y: 100, size: 12, font });
    doc.setTitle("fuzz");
    const sources = [await doc.save({ useObjectStreams: true }), await doc.save({ useObjectStreams: false })];
    const rand = prng(42);
    let failures = 0;
    for (let iter = 0; iter < 400; iter++) {
      const src = sources[iter % 2];
      let bytes: Uint8Array = src.slice();
      const mode = iter % 4;
      if (mode <= 1) {
        for (let k = 0; k < 1 + Math.floor(rand() * 8); k++)
          bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
      } else if (mode === 2) {
        bytes = bytes.slice(0, Math.floor(rand() * bytes.length));
      } else {
        const a = Math.floor(rand() * bytes.length);
        const b = a + Math.floor(rand() * 400);
        bytes = concat([bytes.subarray(0, a), bytes.subarray(Math.min(b, bytes.length))]);
      }
      for (const run of [
        () => probePdf(memoryRangeReader(bytes)),
        () => readPdfPages(memoryRangeReader(bytes), { from: 1, to: 12 }),
      ]) {
        try {
          await run();
        } catch (err) {
          failures++;
          expect(err).toBeInstanceOf(PdfError);
          // "damaged PDF:" marks a TypeError/RangeError caught by the last-resort guard: a bug.
          expect((err as Error).message).not.toMatch(/^damaged PDF:/);
        }
      }
    }
    expect(failures).toBeGreaterThan(50); // the fuzzing really damages files
    // 800 parses: about 10 s in a clean-clone run, three times that on a machine shared with
    // workerd's test runs; the timeout only catches a hang.
  }, 120_000);
});
