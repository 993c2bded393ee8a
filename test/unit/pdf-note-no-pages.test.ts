// The upload note of a PDF with no pages says so and names no pdf_read call: any page range it
// could name ("1-0") is one pdf_read refuses.
import { describe, expect, it } from "vitest";
import { pdfFormat } from "../../services/attachments/formats/pdf";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { buildPdf } from "./pdf-builders";

const ctx = { arg: '"attachment_id":"att_x"', size: 300, tier: "small" as const };

describe("the note of a zero-page PDF", () => {
  it("says it has no pages and names no pdf_read call", async () => {
    const pdf = buildPdf(
      { 1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [] /Count 0 >>" },
      { root: 1 },
    );
    const { facts } = await pdfFormat.probe(memoryRangeReader(pdf));
    expect(facts.pageCount).toBe(0);
    const note = pdfFormat.note(facts, ctx);
    expect(note.facts).toContain("0 pages");
    expect(note.how).toBe("It has no pages: there is no text to read.");
    expect(note.how).not.toMatch(/pdf_read/);
  });

  it("a one-page PDF's note still names the pdf_read call for its page", () => {
    const note = pdfFormat.note({ pageCount: 1, pageCountSource: "xref", pdfTitle: null, encrypted: false }, ctx);
    expect(note.how).toContain('pdf_read {"attachment_id":"att_x","pages":"1-1"}');
  });

  it("a PDF that needs a password (its count unknown) is still told how to pass it", () => {
    const note = pdfFormat.note(
      { pageCount: 0, pageCountSource: "pdfjs", pdfTitle: null, encrypted: true, passwordRequired: true },
      ctx,
    );
    expect(note.how).toMatch(/"password":"..."/);
  });
});
