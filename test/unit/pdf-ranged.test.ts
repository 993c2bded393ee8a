// A 3,000-page PDF (object streams and a classic table) read through ranged reads: page count,
// page ranges, bounds and truncation, each from a small fraction of the file.
import { beforeAll, describe, expect, it } from "vitest";
import { PdfError, probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { kumquatPdf, pdfError, startxrefOf, text } from "./pdf-builders";

const PAGES = 3000;

describe("a 3,000-page PDF read through ranged reads", () => {
  let objStreams: Uint8Array;
  let classic: Uint8Array;
  beforeAll(async () => {
    [objStreams, classic] = await Promise.all([kumquatPdf(PAGES, true), kumquatPdf(PAGES, false)]);
  }, 60_000);

  for (const variant of ["object streams + xref stream", "classic xref table"] as const) {
    describe(variant, () => {
      const bytes = () => (variant === "classic xref table" ? classic : objStreams);

      it("the fixture really uses that cross-reference form", () => {
        const tail = text(bytes().subarray(startxrefOf(bytes()), startxrefOf(bytes()) + 200));
        if (variant === "classic xref table") expect(tail.startsWith("xref")).toBe(true);
        else expect(tail).toContain("/Type /XRef");
      });

      it("probePdf reports 3000 pages from a small fraction of the file", async () => {
        const r = memoryRangeReader(bytes());
        const info = await probePdf(r);
        expect(info.pageCount).toBe(PAGES);
        expect(info.version).toBe("1.7");
        expect(info.encrypted).toBe(false);
        expect(info.bytesRead).toBe(r.bytesRead);
        expect(info.bytesRead).toBeLessThan(0.05 * r.size);
        expect(info.bytesRead).toBeLessThan(300 * 1024);
      });

      it("readPdfPages(1500, 1501) returns exactly those pages, reading < 5% of the file", async () => {
        const r = memoryRangeReader(bytes());
        const out = await readPdfPages(r, { from: 1500, to: 1501 });
        expect(out.pages).toEqual([
          { page: 1500, text: "page 1500 kumquat1500" },
          { page: 1501, text: "page 1501 kumquat1501" },
        ]);
        expect(out.pages.map((p) => p.text).join("\n")).not.toContain("kumquat1502");
        expect(out.truncated).toBe(false);
        expect(out.bytesRead).toBe(r.bytesRead);
        expect(out.bytesRead).toBeLessThan(0.05 * r.size);
        expect(out.bytesRead).toBeLessThan(300 * 1024);
      });

      it("reads the first and the last page", async () => {
        expect((await readPdfPages(memoryRangeReader(bytes()), { from: 1, to: 1 })).pages).toEqual([
          { page: 1, text: "page 1 kumquat1" },
        ]);
        expect(
          (await readPdfPages(memoryRangeReader(bytes()), { from: 2999, to: 3000 })).pages.map((p) => p.text),
        ).toEqual(["page 2999 kumquat2999", "page 3000 kumquat3000"]);
      });

      it("a page past the end is a PdfError naming the page and the count", async () => {
        const err = await pdfError(readPdfPages(memoryRangeReader(bytes()), { from: 3001, to: 3001 }));
        expect(err.message).toBe("page 3001 is past the end: the document has 3000 pages");
        const err2 = await pdfError(readPdfPages(memoryRangeReader(bytes()), { from: 2999, to: 3002 }));
        expect(err2.message).toBe("page 3002 is past the end: the document has 3000 pages");
      });

      it("maxChars stops early and says so", async () => {
        const out = await readPdfPages(memoryRangeReader(bytes()), { from: 10, to: 20, maxChars: 30 });
        expect(out.pages.map((p) => p.text)).toEqual(["page 10 kumquat10", "page 11 kumqu"]);
        expect(out.truncated).toBe(true);
      });

      it("a file cut in half goes to pdf.js, which recovers what it can by scanning, or fails as a PdfError", async () => {
        const t0 = Date.now();
        const half = bytes().slice(0, Math.floor(bytes().length / 2));
        const r = memoryRangeReader(half);
        const info = await probePdf(r).catch((err: unknown) => err);
        if (info instanceof Error) expect(info).toBeInstanceOf(PdfError);
        else expect(info).toMatchObject({ pageCountSource: "pdfjs" });
        // Recovery reads the file (bounded by PDFJS_MAX_BYTES), each chunk once.
        expect(r.bytesRead).toBeLessThan(half.length + 128 * 1024);
        expect(Date.now() - t0).toBeLessThan(10_000);
      });
    });
  }
});
