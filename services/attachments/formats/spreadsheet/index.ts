// The spreadsheet kind has two formats: XLSX (a ZIP package, rows streamed from its sheet XML)
// and CSV/TSV (rows are lines, reached through the text format's line index).
import type { AttachmentFormat } from "../format";
import { XLSX_TYPE } from "../shared/magic";
import { delimitedInfo, readRows } from "./delimited";
import { SPREADSHEET_TOOLS, spreadsheetNote } from "./note";
import { readXlsxRows, xlsxInfo } from "./xlsx";

export const xlsxFormat = {
  kind: "spreadsheet",
  detect: (s) => s.type === XLSX_TYPE,
  async probe(reader) {
    const { sheets, leftOut } = await xlsxInfo(reader);
    return { facts: { sheets, ...(leftOut ? { sheetsLeftOut: leftOut } : {}) } };
  },
  keepsKindWhenUnreadable: true,
  tools: SPREADSHEET_TOOLS,
  note: spreadsheetNote,
  read: readXlsxRows,
} satisfies AttachmentFormat<"spreadsheet">;

const TSV_TYPE = "text/tab-separated-values";

/** The field separator of a CSV or TSV attachment, from its type. */
export const delimiterOf = (type: string) => (type === TSV_TYPE ? "\t" : ",");

export const delimitedFormat = {
  kind: "spreadsheet",
  detect: (s) => s.type === "text/csv" || s.type === TSV_TYPE,
  async probe(_reader, { type, text }) {
    const { index, reader } = await text();
    const info = await delimitedInfo(reader, index, delimiterOf(type));
    return { facts: { columns: info.columns, rows: info.rows, lines: index.lines } };
  },
  // Only the name said CSV: a file that cannot be read as lines is stored as plain bytes.
  keepsKindWhenUnreadable: false,
  tools: SPREADSHEET_TOOLS,
  note: spreadsheetNote,
  read: readRows,
} satisfies AttachmentFormat<"spreadsheet">;
