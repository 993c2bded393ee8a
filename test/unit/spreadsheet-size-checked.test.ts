// A spreadsheet's size is what its rows say, not what its header claims, and a read that starts
// past the last row is an error naming that row (as file_read and pdf_read answer), never an
// empty "rows 3-2".
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { spreadsheetRead } from "../../agent/tools/attachment-tools";
import type { ToolContext } from "../../agent/tools/registry";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { xlsxFormat } from "../../services/attachments/formats/spreadsheet";
import { xlsxInfo } from "../../services/attachments/formats/spreadsheet/xlsx";
import { LineIndexer } from "../../services/attachments/formats/text/line-index";

const NS =
  'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const TWO_ROWS = `<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c></row><row r="2"><c r="A2"><v>3</v></c></row>`;

function book(dimension: string | null, rows = TWO_ROWS): Uint8Array {
  const dim = dimension === null ? "" : `<dimension ref="${dimension}"/>`;
  return zipSync({
    "[Content_Types].xml": strToU8(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "xl/workbook.xml": strToU8(`<workbook ${NS}><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    "xl/_rels/workbook.xml.rels": strToU8(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    ),
    "xl/worksheets/sheet1.xml": strToU8(`<worksheet ${NS}>${dim}<sheetData>${rows}</sheetData></worksheet>`),
  });
}

const ID = "att_01JZ0000000000000000000000";

/** The slices spreadsheet_read uses, over one attachment held in memory. */
function ctxFor(name: string, type: string, bytes: Uint8Array, facts: Record<string, unknown>): ToolContext {
  const indexer = new LineIndexer();
  indexer.push(bytes);
  const index = indexer.finish();
  return {
    activeTools: [],
    openAttachment: async () => ({
      attachment: { id: ID, name, type, facts: { kind: "spreadsheet", ...facts } },
      reader: memoryRangeReader(bytes),
      text: async () => ({ index, reader: memoryRangeReader(bytes) }),
    }),
  } as unknown as ToolContext;
}

describe("an XLSX <dimension> is checked", () => {
  it("one reaching the whole grid is not trusted: the rows are counted", async () => {
    for (const ref of ["A1:XFD1048576", "A1:B1048576", "A1:XFD2"]) {
      const info = await xlsxInfo(memoryRangeReader(book(ref)));
      expect(info.sheets, ref).toEqual([{ name: "S", rows: 2, columns: 2 }]);
    }
  });

  it("one past what the part's bytes can hold is not trusted; a plausible one stands", async () => {
    expect((await xlsxInfo(memoryRangeReader(book("A1:B500000")))).sheets).toEqual([
      { name: "S", rows: 2, columns: 2 },
    ]);
    // A writer's dimension may name a used range wider than the cells written: within reason it is taken as said.
    expect((await xlsxInfo(memoryRangeReader(book("A1:D40")))).sheets).toEqual([{ name: "S", rows: 40, columns: 4 }]);
  });
});

describe("spreadsheet_read past the last row", () => {
  it("XLSX: an error naming the sheet's last row", async () => {
    const bytes = book("A1:XFD1048576");
    const { facts } = await xlsxFormat.probe(memoryRangeReader(bytes));
    const ctx = ctxFor("book.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", bytes, facts);
    const past = await spreadsheetRead.run({ attachment_id: ID, rows: "3-10" }, ctx);
    expect(past).toEqual({ content: 'rows: sheet "S" of book.xlsx has 2 rows; row 3 is past its end', isError: true });
    const within = await spreadsheetRead.run({ attachment_id: ID, rows: "2-10" }, ctx);
    expect(within.isError).toBeUndefined();
    expect(within.content).toBe("[spreadsheet_read: book.xlsx, sheet S, rows 2-2]\n3");
  });

  it("CSV: an error naming the last data row", async () => {
    const bytes = strToU8("a,b\n1,2\n3,4\n");
    const ctx = ctxFor("t.csv", "text/csv", bytes, { columns: ["a", "b"], rows: 2 });
    const past = await spreadsheetRead.run({ attachment_id: ID, rows: "3-5" }, ctx);
    expect(past).toEqual({ content: "rows: t.csv has 2 rows after its header; row 3 is past the end", isError: true });
    const within = await spreadsheetRead.run({ attachment_id: ID, rows: "2-5" }, ctx);
    expect(within).toEqual({ content: "[spreadsheet_read: t.csv, rows 2-2]\na\tb\n3\t4" });
  });
});
