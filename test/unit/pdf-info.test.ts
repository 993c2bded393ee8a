// Document information from the /Info dictionary: title, author, producer and the PDF version,
// in the string encodings writers use.
import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { probePdf } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { buildPdf } from "./pdf-builders";

describe("document information", () => {
  it("title, author and producer from setTitle/setAuthor/setProducer, including non-ASCII", async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    doc.setTitle("Quarterly Kumquats — Ünïcode ✓");
    doc.setAuthor("Ada Lovelace");
    doc.setProducer("context-chat tests");
    for (const useObjectStreams of [true, false]) {
      const info = await probePdf(memoryRangeReader(await doc.save({ useObjectStreams })));
      expect(info).toMatchObject({
        pageCount: 1,
        title: "Quarterly Kumquats — Ünïcode ✓",
        author: "Ada Lovelace",
        producer: "context-chat tests",
        encrypted: false,
      });
    }
  });

  it("absent fields are null; pdf-lib's default producer is reported", async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    const info = await probePdf(memoryRangeReader(await doc.save()));
    expect(info.title).toBeNull();
    expect(info.author).toBeNull();
    expect(info.producer).toMatch(/pdf-lib/);
  });

  it("literal and PDFDocEncoding strings decode", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R /Version /2.0 >>",
        2: "<< /Type /Pages /Kids [] /Count 0 >>",
        3: "<< /Title (Caf\\351 \\(draft\\)) /Author (Line\\\none) /Producer <FEFF00480069> >>",
      },
      { root: 1, info: 3 },
    );
    const info = await probePdf(memoryRangeReader(pdf));
    expect(info).toMatchObject({
      pageCount: 0,
      version: "2.0",
      title: "Café (draft)",
      author: "Lineone",
      producer: "Hi",
    });
  });
});
