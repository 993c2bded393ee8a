// A ranged read that fails under pdf.js (the attachment deleted mid-read: r2RangeReader throws
// "the attachment's bytes are gone") rejects what is waiting on it with a PdfError naming the
// cause, promptly: pdf_read and readPdfPages end with an error instead of hanging. No timing here:
// a hang is caught by the test timeout.
import { readFileSync } from "node:fs";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { PdfError } from "../../services/attachments/formats/pdf/objects";
import { openWithPdfjs } from "../../services/attachments/formats/pdf/pdfjs";
import { readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader, type RangeReader } from "../../services/attachments/formats/shared/range-reader";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/pdf/${name}`, import.meta.url)));

/** A reader whose first `ok` reads succeed and every later one throws, as a deleted R2 object's do. */
function failingAfter(bytes: Uint8Array, ok: number): RangeReader & { calls: number } {
  const inner = memoryRangeReader(bytes);
  const reader = {
    size: bytes.length,
    calls: 0,
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (++reader.calls > ok) throw new Error("the attachment's bytes are gone");
      return inner.read(offset, length);
    },
  };
  return reader;
}

/** A PDF of 6 long pages: pdf.js opens it reading only some of its 64 KB chunks. */
async function bigPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= 6; p++) {
    const page = doc.addPage([600, 800]);
    for (let l = 0; l < 2000; l++) page.drawText(`page ${p} line ${l} quince`, { x: 10, y: 780 - l, font, size: 10 });
  }
  return doc.save();
}

const gone = (err: unknown) => err instanceof PdfError && /the attachment's bytes are gone/.test(err.message);

describe("pdf.js over a reader that fails", () => {
  it("rejects readPdfPages of an encrypted file (pdf.js's) when a read fails after 3", async () => {
    const reader = failingAfter(fixture("qpdf-V4-aes.pdf"), 3);
    const err = await readPdfPages(reader, { from: 1, to: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/the attachment's bytes are gone/);
  });

  it("rejects opening with a PdfError naming the cause", async () => {
    const err = await openWithPdfjs(failingAfter(fixture("qpdf-V4-aes.pdf"), 0)).catch((e: unknown) => e);
    expect(gone(err), String(err)).toBe(true);
  });

  it("rejects a page's text, and every later one, when a read fails after opening", { timeout: 30_000 }, async () => {
    const bytes = await bigPdf();
    const probe = memoryRangeReader(bytes);
    const opened = await openWithPdfjs(probe);
    const readsToOpen = probe.calls;
    expect(probe.bytesRead).toBeLessThan(bytes.length); // pages' text is read later
    await opened.close();
    const doc = await openWithPdfjs(failingAfter(bytes, readsToOpen));
    const first = await doc.pageText(3).catch((e: unknown) => e);
    expect(gone(first), String(first)).toBe(true);
    const again = await doc.pageText(1).catch((e: unknown) => e);
    expect(gone(again), String(again)).toBe(true);
    await doc.close();
  });

  it("skipUnreadable does not turn a failed read into empty pages", async () => {
    const bytes = fixture("qpdf-V4-aes.pdf");
    const err = await readPdfPages(failingAfter(bytes, 3), { from: 1, to: 1, skipUnreadable: true }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/the attachment's bytes are gone/);
  });
});
