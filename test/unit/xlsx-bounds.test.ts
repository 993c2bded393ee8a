// An XLSX read costs what it shows, not what the file holds: start tags are read in one pass (one
// past 64 KiB is refused), the sheet header is searched once, a workbook's sheets are measured
// within one budget with each part read once, the facts stay small however many sheets there are,
// and a row read holds about its cap of text whatever its cells hold. No timing is asserted: each
// case is checked by what is read, kept or returned (timings are for scratch benches).
import { strToU8, type Zippable, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { spreadsheetRead } from "../../agent/tools/attachment-tools";
import type { ToolContext } from "../../agent/tools/registry";
import { attachmentNote } from "../../services/attachments/note";
import { AttachmentFormatError } from "../../services/attachments/formats/shared/errors";
import { memoryRangeReader, type RangeReader } from "../../services/attachments/formats/shared/range-reader";
import { listZip } from "../../services/attachments/formats/shared/zip";
import { xlsxFormat } from "../../services/attachments/formats/spreadsheet";
import { readXlsxRows, tagAttributes, xlsxInfo } from "../../services/attachments/formats/spreadsheet/xlsx";
import { lcg } from "./format-bytes";

const NS =
  'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/**
 * A workbook of these sheet parts (xl/worksheets/<part>.xml); `sheets` names them ([name, part]),
 * one sheet per part by default; `shared` are its shared strings.
 */
function book(opts: { parts: Record<string, string | Uint8Array>; sheets?: [string, string][]; shared?: string[] }) {
  const partNames = Object.keys(opts.parts);
  const sheets = opts.sheets ?? partNames.map((p, i): [string, string] => [`S${i + 1}`, p]);
  const files: Zippable = {
    "xl/workbook.xml": strToU8(
      `<workbook ${NS}><sheets>${sheets
        .map(([name, part], i) => `<sheet name="${name}" sheetId="${i + 1}" r:id="rId${partNames.indexOf(part) + 1}"/>`)
        .join("")}</sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": strToU8(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${partNames
        .map((p, i) => `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/${p}.xml"/>`)
        .join("")}<Relationship Id="rIdS" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
  };
  for (const [p, xml] of Object.entries(opts.parts))
    files[`xl/worksheets/${p}.xml`] = typeof xml === "string" ? strToU8(xml) : xml;
  if (opts.shared)
    files["xl/sharedStrings.xml"] = strToU8(
      `<sst ${NS}>${opts.shared.map((t) => `<si><t>${t}</t></si>`).join("")}</sst>`,
    );
  return zipSync(files);
}

const sheet = (rows: string, head = "") => `<worksheet ${NS}>${head}<sheetData>${rows}</sheetData></worksheet>`;

/** n letters from a fixed seed: text that does not compress away. */
function letters(n: number, seed: number): string {
  const rand = lcg(seed);
  let out = "";
  for (let i = 0; i < n; i++) out += String.fromCharCode(97 + Math.floor(rand() * 26));
  return out;
}

async function formatError(p: Promise<unknown>): Promise<AttachmentFormatError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AttachmentFormatError);
  return err as AttachmentFormatError;
}

/** What the attribute pattern read before: kept here as the reference the one-pass reader matches. */
function byPattern(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) out[m[1]] = m[2] ?? m[3];
  return out;
}

describe("XLSX start tags", () => {
  it("read the same attributes the pattern did, for any mix of names, spaces, quotes and equals signs", () => {
    const pieces = ["a", "r", "t", "x:y", "1", "_", ".", "-", "=", '"', "'", " ", "\t", "\u00a0", "<", ">", "/", "s"];
    const rand = lcg(7);
    for (let n = 0; n < 5000; n++) {
      let tag = "";
      const length = Math.floor(rand() * 30);
      for (let i = 0; i < length; i++) tag += pieces[Math.floor(rand() * pieces.length)];
      expect(tagAttributes(tag), JSON.stringify(tag)).toEqual(byPattern(tag));
    }
    expect(tagAttributes(` r="A1" t='s' s = "3"`)).toEqual({ r: "A1", t: "s", s: "3" });
    expect(tagAttributes(` name="Fish &amp; Chips"`)).toEqual({ name: "Fish & Chips" });
  });

  it("a cell start tag longer than 64 KiB is refused as bad XML", async () => {
    const bytes = book({ parts: { sheet1: sheet(`<row r="1"><c ${"a".repeat(70_000)}><v>1</v></c></row>`) } });
    expect((await formatError(readXlsxRows(memoryRangeReader(bytes), { sheet: 1, from: 1, to: 1 }))).code).toBe(
      "bad_xml",
    );
    expect((await formatError(xlsxInfo(memoryRangeReader(bytes)))).code).toBe("bad_xml");
  });

  it("a row of cells whose start tags run just under the bound with no '=' reads as its cells", async () => {
    // The pattern took seconds on each such tag (a 160,000-letter one took 20 s).
    const cells = Array.from({ length: 20 }, (_, i) => `<c ${"a".repeat(60_000)}><v>${i}</v></c>`).join("");
    const bytes = book({ parts: { sheet1: sheet(`<row r="1">${cells}</row>`) } });
    const read = await readXlsxRows(memoryRangeReader(bytes), { sheet: 1, from: 1, to: 1 });
    expect(read.rows).toEqual([Array.from({ length: 20 }, (_, i) => i)]);
  });
});

describe("an XLSX sheet's <dimension>", () => {
  it("is found after a long header, in a start tag that spans many chunks", async () => {
    const head = `<sheetPr><x a="${letters(100_000, 1)}"/></sheetPr><dimension b="${letters(40_000, 2)}" ref="A1:C7"/>`;
    const rows = `<row r="1"><c r="A1"><v>1</v></c></row>`;
    const info = await xlsxInfo(memoryRangeReader(book({ parts: { sheet1: sheet(rows, head) } })));
    expect(info.sheets).toEqual([{ name: "S1", rows: 7, columns: 3 }]);
  });

  it("a start tag without a ref is passed over for the next; a header of 32,000 '<dimension' is counted by a scan", async () => {
    const rows = `<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c></row>`;
    const twice = sheet(rows, `<dimension/><dimension ref="A1:D9"/>`);
    expect((await xlsxInfo(memoryRangeReader(book({ parts: { sheet1: twice } })))).sheets).toEqual([
      { name: "S1", rows: 9, columns: 4 },
    ]);
    // Each "<dimension" once ran the pattern to the header's one ">" (3.4 s for this 1.5 KB file).
    const hostile = sheet(rows, `${"<dimension ".repeat(32_000)}>`);
    expect((await xlsxInfo(memoryRangeReader(book({ parts: { sheet1: hostile } })))).sheets).toEqual([
      { name: "S1", rows: 1, columns: 2 },
    ]);
  });
});

/** A reader that counts the bytes read from inside [from, to). */
function countingReader(bytes: Uint8Array, [from, to]: [number, number]): RangeReader & { inRange: number } {
  const inner = memoryRangeReader(bytes);
  const reader = {
    size: inner.size,
    inRange: 0,
    read: (offset: number, length: number) => {
      reader.inRange += Math.max(0, Math.min(to, offset + length) - Math.max(from, offset));
      return inner.read(offset, length);
    },
  };
  return reader;
}

/** The bytes xlsxInfo reads of one part (its local header and data), and the part's size. */
async function partReads(bytes: Uint8Array, part: string): Promise<{ read: number; size: number }> {
  const entry = (await listZip(memoryRangeReader(bytes))).find((e) => e.name === `xl/worksheets/${part}.xml`);
  if (!entry) throw new Error(`no ${part}`);
  const start = entry.localHeaderOffset;
  const reader = countingReader(bytes, [start, start + 30 + 64 + entry.compressedSize]);
  await xlsxInfo(reader);
  return { read: reader.inRange, size: entry.compressedSize };
}

describe("an XLSX workbook's sheets", () => {
  it("a part several sheets name is read once", async () => {
    // No <dimension>: the rows are counted by reading the whole part.
    let rows = "";
    for (let r = 1; r <= 60; r++)
      rows += `<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>${letters(4000, r)}</t></is></c></row>`;
    const parts = { sheet1: sheet(rows) };
    const once = book({ parts, sheets: [["A", "sheet1"]] });
    const thrice = book({
      parts,
      sheets: [
        ["A", "sheet1"],
        ["B", "sheet1"],
        ["C", "sheet1"],
      ],
    });
    const info = await xlsxInfo(memoryRangeReader(thrice));
    expect(info.sheets.map((s) => [s.name, s.rows, s.columns])).toEqual([
      ["A", 60, 1],
      ["B", 60, 1],
      ["C", 60, 1],
    ]);
    const readOnce = await partReads(once, "sheet1");
    expect(readOnce.read).toBeGreaterThanOrEqual(readOnce.size);
    expect((await partReads(thrice, "sheet1")).read).toBe(readOnce.read);
  });

  it("share one budget for counting rows: past 64 MiB in all, a sheet's count is a lower bound", async () => {
    // Two parts of 36 MiB without a <dimension>: each alone is counted to its end.
    const big = strToU8(sheet(`<row><c t="inlineStr"><is><t>${"A".repeat(1024 * 1024)}</t></is></c></row>`.repeat(36)));
    const info = await xlsxInfo(memoryRangeReader(book({ parts: { one: big, two: big } })));
    expect(info.sheets[0]).toEqual({ name: "S1", rows: 36, columns: 1 });
    expect(info.sheets[1].approximate).toBe(true);
    expect(info.sheets[1].rows).toBeLessThan(36);
  });

  it("the facts list 100 sheets with names of at most 100 characters, and the note counts the rest", async () => {
    const long = "N".repeat(1000);
    const sheets = Array.from({ length: 2500 }, (_, i): [string, string] => [`${long}${i}`, "sheet1"]);
    const rows = `<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c></row><row r="2"><c r="A2"><v>3</v></c></row>`;
    const bytes = book({ parts: { sheet1: sheet(rows, `<dimension ref="A1:B2"/>`) }, sheets });
    expect(bytes.length).toBeLessThan(64 * 1024);
    const { facts } = await xlsxFormat.probe(memoryRangeReader(bytes));
    // D1 refuses a row over 2,000,000 bytes; 2,500 such names made a 2.59M-character row.
    expect(new TextEncoder().encode(JSON.stringify(facts)).length).toBeLessThan(100_000);
    expect(facts.sheets).toHaveLength(100);
    expect(facts.sheets?.every((s) => s.name === long.slice(0, 100) && s.rows === 2 && s.columns === 2)).toBe(true);
    expect(facts.sheetsLeftOut).toBe(2400);
    const note = attachmentNote({
      id: "att_01JZ0000000000000000000000",
      name: "many.xlsx",
      type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      size: bytes.length,
      facts: { kind: "spreadsheet", ...facts },
    });
    const listed = note.split("(2 rows x 2 columns)").length - 1;
    expect(listed).toBeGreaterThan(0);
    expect(note).toContain(`, and ${(2500 - listed).toLocaleString("en-US")} more`);
  });

  it("a sheet name is cut whole: never half a surrogate pair", async () => {
    const name = `${"a".repeat(99)}😀b`;
    const rows = `<row r="1"><c r="A1"><v>1</v></c></row>`;
    const info = await xlsxInfo(
      memoryRangeReader(book({ parts: { sheet1: sheet(rows) }, sheets: [[name, "sheet1"]] })),
    );
    expect(info.sheets[0].name).toBe("a".repeat(99));
    expect(info.leftOut).toBe(0);
  });
});

describe("an XLSX row read with maxChars", () => {
  const long = letters(5000, 3);

  it("keeps at most maxChars + 1 characters of each value: inline, formula and shared strings", async () => {
    const rows =
      `<row r="1"><c r="A1" t="inlineStr"><is><t>${long}</t></is></c></row>` +
      `<row r="2"><c r="A2" t="str"><v>${long}</v></c></row>` +
      `<row r="3"><c r="A3" t="s"><v>0</v></c></row>`;
    const bytes = book({ parts: { sheet1: sheet(rows) }, shared: [long] });
    for (const r of [1, 2, 3]) {
      const read = await readXlsxRows(memoryRangeReader(bytes), { sheet: 1, from: r, to: 3, maxChars: 1000 });
      expect(read.rows).toEqual([[long.slice(0, 1001)]]);
      expect(read.truncated).toBe(r < 3);
    }
  });

  it("reads the sheet no further than the row whose text passes maxChars", async () => {
    let rows = "";
    for (let r = 1; r <= 50; r++)
      rows += `<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>${letters(100_000, r)}</t></is></c></row>`;
    const bytes = book({ parts: { sheet1: sheet(rows) } });
    const reader = memoryRangeReader(bytes);
    const read = await readXlsxRows(reader, { sheet: 1, from: 1, to: 50, maxChars: 1000 });
    expect(read.rows.map((row) => String(row[0]).length)).toEqual([1001]);
    expect(read.truncated).toBe(true);
    expect(reader.bytesRead).toBeLessThan(bytes.length / 4);
  });

  it("keeps the shared strings of the rows it shows, however many strings the rows use", async () => {
    // 30 rows of one 600-character string each: rows 1-3 fit 2,000 characters, row 4 does not.
    const strings = Array.from({ length: 30 }, (_, i) => letters(600, 100 + i));
    const cellsOf = (index: (r: number) => number) =>
      Array.from(
        { length: 30 },
        (_, k) => `<row r="${k + 1}"><c r="A${k + 1}" t="s"><v>${index(k + 1)}</v></c></row>`,
      ).join("");
    for (const index of [(r: number) => r - 1, (r: number) => 30 - r]) {
      const bytes = book({ parts: { sheet1: sheet(cellsOf(index)) }, shared: strings });
      const read = await readXlsxRows(memoryRangeReader(bytes), { sheet: 1, from: 1, to: 30, maxChars: 2000 });
      expect(read.rows).toEqual([1, 2, 3].map((r) => [strings[index(r)]]));
      expect(read.truncated).toBe(true);
    }
  });

  it("a first row longer than maxChars keeps its cells to that point: the rest are empty", async () => {
    const strings = Array.from({ length: 10 }, (_, i) => letters(500, 200 + i));
    const cells = Array.from(
      { length: 10 },
      (_, k) => `<c r="${String.fromCharCode(65 + k)}1" t="s"><v>${9 - k}</v></c>`,
    );
    const bytes = book({ parts: { sheet1: sheet(`<row r="1">${cells.join("")}</row>`) }, shared: strings });
    const read = await readXlsxRows(memoryRangeReader(bytes), { sheet: 1, from: 1, to: 1, maxChars: 2000 });
    // Three tabs and four values of 500 pass 2,000 at the fourth cell.
    expect(read.rows).toEqual([[strings[9], strings[8], strings[7], strings[6], null, null, null, null, null, null]]);
  });

  it("spreadsheet_read shows the same text of a long row as the whole row cut at its cap", async () => {
    const strings = Array.from({ length: 40 }, (_, i) => letters(2000, 300 + i));
    const cells = Array.from({ length: 40 }, (_, k) => `<c r="${colName(k + 1)}1" t="s"><v>${39 - k}</v></c>`);
    const bytes = book({ parts: { sheet1: sheet(`<row r="1">${cells.join("")}</row>`) }, shared: strings });
    const id = "att_01JZ0000000000000000000000";
    const ctx = {
      activeTools: [],
      openAttachment: async () => ({
        attachment: { id, name: "b.xlsx", type: "x", facts: { kind: "spreadsheet", sheets: [] } },
        reader: memoryRangeReader(bytes),
      }),
    } as unknown as ToolContext;
    const out = await spreadsheetRead.run({ attachment_id: id, rows: "1-1" }, ctx);
    const whole = Array.from({ length: 40 }, (_, k) => strings[39 - k]).join("\t");
    expect(out.content).toBe(
      `[spreadsheet_read: b.xlsx, sheet S1, rows 1-1]\n${whole.slice(0, 60_000)}\n\n` +
        "[spreadsheet_read: row 1 is longer than the 60,000-char cap and is cut there]",
    );
  });
});

/** Column letters of a 1-based column number (1 = A, 27 = AA). */
function colName(n: number): string {
  let out = "";
  for (let c = n; c > 0; c = Math.floor((c - 1) / 26)) out = String.fromCharCode(65 + ((c - 1) % 26)) + out;
  return out;
}
