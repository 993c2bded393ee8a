// The root /Count was checked by finding its last page, but findPage skips a sibling subtree by that
// subtree's own /Count: a lying intermediate node let a 1 KB file with 2 pages say 10,000,000. A
// count the file is too small to hold (under 128 bytes a page) is now checked by counting the
// leaves, and a tree too large to count (a 30,000-page file) keeps its /Count through the
// last-page check. The trees below use small page objects (the box and fonts sit on the root) so
// that their counts take the counting path, not the size-plausible last-page one.
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
const page = (contents: number, parent = 2) =>
  `<< /Type /Page /Parent ${parent} 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R >> >> /Contents ${contents} 0 R >>`;
/** A page inheriting its box and fonts from the root (ISO 32000-1 §7.7.3.4). */
const smallPage = (contents: number, parent: number) =>
  `<< /Type /Page /Parent ${parent} 0 R /Contents ${contents} 0 R >>`;
const inherited = "/MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R >> >>";
/** The pages a file of `bytes` is large enough for without counting them (MIN_PAGE_BYTES). */
const plausible = (bytes: number) => Math.floor(bytes / 128);

/** A flat tree of `pages` pages (objects 10, 11, …) sharing one content stream. */
function flatTree(pages: number) {
  const objects: Record<number, string> = {
    1: "<< /Type /Catalog /Pages 2 0 R >>",
    4: font,
    5: content("same words"),
  };
  const kids: string[] = [];
  for (let i = 0; i < pages; i++) {
    objects[10 + i] = smallPage(5, 2);
    kids.push(`${10 + i} 0 R`);
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.join(" ")}] /Count ${pages} ${inherited} >>`;
  return buildPdf(objects, { root: 1 });
}

/**
 * `groups` /Pages nodes of `each` pages under the root; the last page's text is "the last page".
 * With `mixed`, each group's last two pages sit in a /Pages node of their own, so no group is flat
 * (its /Count is not its number of kids) and counting means resolving every kid.
 */
function balancedTree(groups: number, each: number, mixed = false) {
  const objects: Record<number, string> = {
    1: "<< /Type /Catalog /Pages 2 0 R >>",
    4: font,
    5: content("same words"),
    6: content("the last page"),
  };
  const groupRefs: string[] = [];
  let next = 10;
  for (let g = 0; g < groups; g++) {
    const node = next++;
    groupRefs.push(`${node} 0 R`);
    const kids: string[] = [];
    const sub = mixed ? next++ : 0;
    const subKids: string[] = [];
    for (let i = 0; i < each; i++) {
      const last = g === groups - 1 && i === each - 1;
      const inSub = mixed && i >= each - 2;
      objects[next] = smallPage(last ? 6 : 5, inSub ? sub : node);
      (inSub ? subKids : kids).push(`${next++} 0 R`);
    }
    if (mixed) {
      objects[sub] = `<< /Type /Pages /Parent ${node} 0 R /Kids [${subKids.join(" ")}] /Count 2 >>`;
      kids.push(`${sub} 0 R`);
    }
    objects[node] = `<< /Type /Pages /Parent 2 0 R /Kids [${kids.join(" ")}] /Count ${each} >>`;
  }
  objects[2] = `<< /Type /Pages /Kids [${groupRefs.join(" ")}] /Count ${groups * each} ${inherited} >>`;
  return buildPdf(objects, { root: 1 });
}

describe("the page count is not taken from a lying intermediate /Count", () => {
  it("a 2-page file whose subtree says 9,999,999 pages (root 10,000,000) has 2 pages", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [6 0 R 3 0 R] /Count 10000000 >>",
        3: page(5),
        4: font,
        5: content("second"),
        6: "<< /Type /Pages /Parent 2 0 R /Kids [7 0 R] /Count 9999999 >>",
        7: page(8, 6),
        8: content("first"),
      },
      { root: 1 },
    );
    expect(pdf.length).toBeLessThan(1024);
    expect((await probePdf(memoryRangeReader(pdf))).pageCount).toBe(2);
    expect((await pdfFormat.probe(memoryRangeReader(pdf))).facts.pageCount).toBe(2);
    const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 2 });
    expect(read.pages.map((p) => p.text)).toEqual(["first", "second"]);
    const err = await pdfError(readPdfPages(memoryRangeReader(pdf), { from: 3, to: 3 }));
    expect(err.message).toBe("page 3 is past the end: the document has 2 pages");
  });

  it("a flat 1,000-page tree has 1,000 pages", async () => {
    const pdf = flatTree(1000);
    expect(plausible(pdf.length)).toBeLessThan(1000);
    const info = await probePdf(memoryRangeReader(pdf));
    expect(info).toMatchObject({ pageCount: 1000, pageCountSource: "xref" });
  });

  for (const [name, mixed] of [
    ["a balanced 30,000-page tree of flat nodes is counted", false],
    ["a balanced 30,000-page tree too large to walk keeps its /Count", true],
  ] as const) {
    it(name, async () => {
      const pdf = balancedTree(30, 1000, mixed);
      expect(plausible(pdf.length)).toBeLessThan(30_000);
      const info = await probePdf(memoryRangeReader(pdf));
      expect(info).toMatchObject({ pageCount: 30_000, pageCountSource: "xref" });
      const read = await readPdfPages(memoryRangeReader(pdf), { from: 30_000, to: 30_000 });
      expect(read.pages).toEqual([{ page: 30_000, text: "the last page" }]);
    }, 20_000);
  }
});
