// The pdf.js fallback over ranged reads, on real files from qpdf's test suite (test/fixtures/pdf):
// the own reader alone refuses each of them (broken xref, encryption).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NEEDS_PASSWORD, probePdf, readPdfPages, WRONG_PASSWORD } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/pdf/${name}`, import.meta.url)));

describe("PDFs the own reader cannot open alone", () => {
  it("recovers the page count of a file whose startxref points at no xref, and says pdf.js found it", async () => {
    const info = await probePdf(memoryRangeReader(fixture("qpdf-bad-xref.pdf")));
    expect(info).toMatchObject({ pageCount: 1, pageCountSource: "pdfjs", passwordRequired: false });
    const out = await readPdfPages(memoryRangeReader(fixture("qpdf-bad-xref.pdf")), { from: 1, to: 1 });
    expect(out.pages[0].text).toBe("Potato");
  });

  it("decrypts an AES-128 file with the empty user password: count from the xref, text through pdf.js", async () => {
    const info = await probePdf(memoryRangeReader(fixture("qpdf-V4-aes.pdf")));
    expect(info).toMatchObject({ pageCount: 30, encrypted: true, passwordRequired: false });
    const out = await readPdfPages(memoryRangeReader(fixture("qpdf-V4-aes.pdf")), { from: 29, to: 30 });
    expect(out.pages).toEqual([
      { page: 29, text: "Potato 28" },
      { page: 30, text: "Potato 29" },
    ]);
  });

  it("asks for a real user password, refuses a wrong one, and reads with the right one", async () => {
    const bytes = fixture("qpdf-enc-R3-V2-user-view.pdf");
    const info = await probePdf(memoryRangeReader(bytes));
    expect(info).toMatchObject({ encrypted: true, passwordRequired: true });
    await expect(readPdfPages(memoryRangeReader(bytes), { from: 1, to: 1 })).rejects.toThrow(NEEDS_PASSWORD);
    await expect(readPdfPages(memoryRangeReader(bytes), { from: 1, to: 1, password: "nope" })).rejects.toThrow(
      WRONG_PASSWORD,
    );
    expect(await probePdf(memoryRangeReader(bytes), { password: "view" })).toMatchObject({
      pageCount: 30,
      passwordRequired: false,
    });
    expect((await readPdfPages(memoryRangeReader(bytes), { from: 2, to: 2, password: "view" })).pages[0].text).toBe(
      "Potato 1",
    );
  });

  it("reads through ranges: pdf.js fetches chunks of a large file, not the whole of it", async () => {
    // The AES fixture padded with 8 MB of comment before its tail would be one big read if pdf.js
    // loaded the file; the range transport fetches only chunks it needs.
    const bytes = fixture("qpdf-V4-aes.pdf");
    const reader = memoryRangeReader(bytes);
    await readPdfPages(reader, { from: 1, to: 1 });
    expect(reader.bytesRead).toBeLessThan(4 * bytes.length);
  });
});
