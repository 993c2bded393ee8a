// XLSX parts built to make a parser's work grow faster than its input: opening tags never closed
// (<c>, <v>, <is>, <t>, <rPh>) by the tens of thousands in one row or shared string. Each must read
// as the same cells it always did, and finish (the reading is linear: no timing is asserted here).
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { AttachmentFormatError } from "../../services/attachments/formats/shared/errors";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { readXlsxRows, xlsxInfo } from "../../services/attachments/formats/spreadsheet/xlsx";

const NS =
  'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/** A one-sheet workbook (no <dimension>, so xlsxInfo scans the rows) with these rows and shared strings. */
function book(rows: string, sharedStrings = ""): Uint8Array {
  return zipSync({
    "[Content_Types].xml": strToU8(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "xl/workbook.xml": strToU8(
      `<workbook ${NS}><sheets><sheet name="Hostile" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": strToU8(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
    "xl/worksheets/sheet1.xml": strToU8(`<worksheet ${NS}><sheetData>${rows}</sheetData></worksheet>`),
    "xl/sharedStrings.xml": strToU8(`<sst ${NS}>${sharedStrings}</sst>`),
  });
}

const rowsOf = async (bytes: Uint8Array) =>
  (await readXlsxRows(memoryRangeReader(bytes), { sheet: 1, from: 1, to: 2 })).rows;

// Before the fix, 40,000 unclosed <c> took seconds and 160,000 took half a minute (quadratic).
describe.each([40_000, 160_000])("a hostile sheet with %i unclosed tags", (n) => {
  it("a row of <c> never closed holds no cells, and the scan for the sheet's size finishes", async () => {
    const bytes = book(`<row r="1">${"<c>".repeat(n)}</row>`);
    expect(bytes.length).toBeLessThan(4096);
    expect((await xlsxInfo(memoryRangeReader(bytes))).sheets).toEqual([{ name: "Hostile", rows: 0, columns: 0 }]);
    expect(await rowsOf(bytes)).toEqual([[]]);
  });

  it("cells before and after the unclosed ones read as before", async () => {
    // The first <c> runs (as it always did) to the first </c>: its value is the first <v> in it.
    const bytes = book(
      `<row r="1"><c r="A1"><v>1</v></c>${"<c>".repeat(n)}<c r="C1"><v>3</v></c></row>` +
        `<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2">${"<v>".repeat(n)}</c><c r="C2"><v>7</v></c></row>`,
      `<si><t>ok</t>${"<t>".repeat(n)}</si>`,
    );
    expect((await xlsxInfo(memoryRangeReader(bytes))).sheets).toEqual([{ name: "Hostile", rows: 2, columns: 3 }]);
    expect(await rowsOf(bytes)).toEqual([
      [1, 3, null],
      ["ok", null, 7],
    ]);
  });

  it("inline and shared strings with unclosed <is>, <t> and <rPh> keep their text", async () => {
    const bytes = book(
      `<row r="1"><c r="A1" t="inlineStr"><is><t>in</t>${"<t>".repeat(n)}</is></c>` +
        `<c r="B1" t="inlineStr"><is><t>line</t>${"<rPh>".repeat(n)}</is></c>` +
        `<c r="C1" t="inlineStr">${"<is>".repeat(n)}</c>` +
        `<c r="D1" t="s"><v>0</v></c><c r="E1" t="s"><v>1</v></c></row>`,
      `<si>${"<rPh>".repeat(n)}<t>shared</t></si><si><t>two</t>${"<t>".repeat(n)}</si>`,
    );
    expect(await rowsOf(bytes)).toEqual([["in", "line", null, "shared", "two"]]);
  });
});

describe("a row element never closed", () => {
  it("is read as no row, and one past the element size limit is a clean format error", async () => {
    expect((await xlsxInfo(memoryRangeReader(book(`<row r="1">${"<c>".repeat(100_000)}`)))).sheets).toEqual([
      { name: "Hostile", rows: 0, columns: 0 },
    ]);
    // A start tag that never ends, past the 16 MiB an element may have.
    const err = await xlsxInfo(memoryRangeReader(book(`<row r="1" ${"a".repeat(17 * 1024 * 1024)}`))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AttachmentFormatError);
    expect((err as AttachmentFormatError).code).toBe("bad_xml");
  });
});
