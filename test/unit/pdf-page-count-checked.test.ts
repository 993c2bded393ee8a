// A PDF's root /Count is a number in the file, not a fact: the probe checks that its last page is
// there and counts the pages when it is not, so a one-page file saying 100,000 pages is one page
// to the upload note, pdf_info, pdf_read and the indexing that pdf_search queues.
import { describe, expect, it } from "vitest";
import { pdfFormat } from "../../services/attachments/formats/pdf";
import { probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { buildPdf, pdfError } from "./pdf-builders";

const content = (words: string) => {
  const ops = `BT /F1 12 Tf 20 100 Td (${words}) Tj ET`;
  return `<< /Length ${ops.length} >>\nstream\n${ops}\nendstream`;
};
const font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
const page = (contents: number) =>
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R >> >> /Contents ${contents} 0 R >>`;

/** One page, with the root /Count `count` and a correct cross-reference table (offsets computed). */
const onePage = (count: number) =>
  buildPdf(
    {
      1: "<< /Type /Catalog /Pages 2 0 R >>",
      2: `<< /Type /Pages /Kids [3 0 R] /Count ${count} >>`,
      3: page(5),
      4: font,
      5: content("the only page"),
    },
    { root: 1 },
  );

describe("the root /Count is checked against the page tree", () => {
  it("a one-page file that says 100,000 (or 10,000,000) pages has one page", async () => {
    for (const count of [100_000, 10_000_000]) {
      const pdf = onePage(count);
      expect(pdf.length).toBeLessThan(1024);
      const info = await probePdf(memoryRangeReader(pdf));
      expect(info).toMatchObject({ pageCount: 1, pageCountSource: "xref" });
      const probed = await pdfFormat.probe(memoryRangeReader(pdf));
      expect(probed.facts.pageCount).toBe(1);
      const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 });
      expect(read.pages).toEqual([{ page: 1, text: "the only page" }]);
      const err = await pdfError(readPdfPages(memoryRangeReader(pdf), { from: 2, to: 2 }));
      expect(err.message).toBe("page 2 is past the end: the document has 1 page");
    }
  });

  it("a nested tree under a wrong root /Count is counted", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [6 0 R 3 0 R] /Count 5000 >>",
        3: page(5),
        4: font,
        5: content("third"),
        6: "<< /Type /Pages /Parent 2 0 R /Kids [7 0 R 8 0 R] /Count 2 >>",
        7: page(9),
        8: page(10),
        9: content("first"),
        10: content("second"),
      },
      { root: 1 },
    );
    expect((await probePdf(memoryRangeReader(pdf))).pageCount).toBe(3);
    const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 3 });
    expect(read.pages.map((p) => p.text)).toEqual(["first", "second", "third"]);
  });

  it("a right /Count stands", async () => {
    const pdf = onePage(1);
    expect(await probePdf(memoryRangeReader(pdf))).toMatchObject({ pageCount: 1, pageCountSource: "xref" });
  });
});
