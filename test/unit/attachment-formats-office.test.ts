// ZIP-based office formats: the ranged ZIP reader, XLSX sheets and rows, DOCX text; bad input
// fails as an AttachmentFormatError.
import { strToU8, zipSync, type Zippable } from "fflate";
import { describe, expect, it } from "vitest";
import { docxText } from "../../services/attachments/formats/document/docx";
import { AttachmentFormatError } from "../../services/attachments/formats/shared/errors";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { readXlsxRows, xlsxInfo } from "../../services/attachments/formats/spreadsheet/xlsx";
import { listZip, readZipEntry } from "../../services/attachments/formats/shared/zip";
import { lcg } from "./format-bytes";

async function expectFormatError(p: Promise<unknown>, code: string): Promise<AttachmentFormatError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AttachmentFormatError);
  expect((err as AttachmentFormatError).code).toBe(code);
  return err as AttachmentFormatError;
}

const xml = (s: string) => strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`);
const NS =
  'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

function bigSheetRows(n: number): string {
  const rand = lcg(42);
  let out = "";
  for (let r = 1; r <= n; r++)
    out += `<row r="${r}"><c r="A${r}"><v>${r}</v></c><c r="B${r}"><v>${Math.floor(rand() * 1e9)}</v></c></row>`;
  return out;
}

function workbook(level: 0 | 6 = 6): Uint8Array {
  const files: Zippable = {
    "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "_rels/.rels": xml(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ),
    "xl/workbook.xml": xml(
      `<workbook ${NS}><sheets><sheet name="Data" sheetId="1" r:id="rId1"/><sheet name="Notes &amp; More" sheetId="2" r:id="rId2"/><sheet name="Big" sheetId="3" r:id="rId4"/></sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": xml(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${REL}/worksheet" Target="/xl/worksheets/sheet2.xml"/>` +
        `<Relationship Id="rId3" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>` +
        `<Relationship Id="rId4" Type="${REL}/worksheet" Target="worksheets/sheet3.xml"/>` +
        `</Relationships>`,
    ),
    "xl/sharedStrings.xml": xml(
      `<sst ${NS} count="6" uniqueCount="6">` +
        `<si><t>Name</t></si>` +
        `<si><t>Amount</t></si>` +
        `<si><t>Active</t></si>` +
        `<si><r><rPr><b/></rPr><t>Fish </t></r><r><t xml:space="preserve">&amp; Chips</t></r></si>` +
        `<si><t>Tōkyō</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si>` +
        `<si><t>line_x000D_break</t></si>` +
        `</sst>`,
    ),
    "xl/worksheets/sheet1.xml": xml(
      `<worksheet ${NS}><dimension ref="A1:D5"/><sheetData>` +
        `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>` +
        `<row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2"><v>12.5</v></c><c r="C2" t="b"><v>1</v></c></row>` +
        `<row r="4"><c r="A4" t="s"><v>4</v></c><c r="B4"><f>B2*2</f><v>25</v></c><c r="C4" t="b"><v>0</v></c><c r="D4" t="inlineStr"><is><t>inline &lt;x&gt;</t></is></c></row>` +
        `<row r="5"><c r="A5" t="s"><v>5</v></c><c r="B5" t="str"><v>text result</v></c><c r="C5" t="e"><v>#DIV/0!</v></c><c r="D5" s="3"/></row>` +
        `</sheetData></worksheet>`,
    ),
    // No <dimension>: the count comes from scanning; cells without r follow on.
    "xl/worksheets/sheet2.xml": xml(
      `<worksheet ${NS}><sheetData><row><c><v>1</v></c><c><v>2</v></c></row><row><c><v>3</v></c></row><row r="7"><c r="E7"><v>-4e3</v></c></row></sheetData></worksheet>`,
    ),
    "xl/worksheets/sheet3.xml": xml(
      `<worksheet ${NS}><dimension ref="A1:B60000"/><sheetData>${bigSheetRows(60_000)}</sheetData></worksheet>`,
    ),
  };
  return zipSync(files, { level });
}

const W =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"';

function docx(body: string): Uint8Array {
  return zipSync({
    "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "word/document.xml": xml(`<w:document ${W}><w:body>${body}<w:sectPr/></w:body></w:document>`),
  });
}

describe("zip", () => {
  it("lists entries and reads STORED and DEFLATE entries", async () => {
    for (const level of [0, 6] as const) {
      const bytes = zipSync(
        { "a.txt": strToU8("alpha ".repeat(1000)), "dir/b.bin": new Uint8Array([1, 2, 3]) },
        { level },
      );
      const r = memoryRangeReader(bytes);
      const entries = await listZip(r);
      expect(entries.map((e) => e.name)).toEqual(["a.txt", "dir/b.bin"]);
      expect(entries[0].method).toBe(level === 0 ? 0 : 8);
      expect(new TextDecoder().decode(await readZipEntry(r, entries[0]))).toBe("alpha ".repeat(1000));
      expect(Array.from(await readZipEntry(r, entries[1]))).toEqual([1, 2, 3]);
    }
  });

  it("refuses entries over the size cap, unknown methods and corrupt data", async () => {
    const bytes = zipSync({ "a.txt": strToU8("z".repeat(10_000)) });
    const entries = await listZip(memoryRangeReader(bytes));
    await expectFormatError(readZipEntry(memoryRangeReader(bytes), entries[0], { maxBytes: 9_999 }), "too_large");

    const bzip = bytes.slice();
    const cd = bzip.length - 22 - 46 - "a.txt".length;
    expect(bzip[cd]).toBe(0x50); // the central directory record
    bzip[cd + 10] = 12;
    const e2 = await listZip(memoryRangeReader(bzip));
    await expectFormatError(readZipEntry(memoryRangeReader(bzip), e2[0]), "unsupported");

    // STORED data with one byte changed inflates fine: only the checksum catches it.
    const stored = zipSync({ "s.txt": strToU8("stored text") }, { level: 0 });
    const changed = stored.slice();
    const at = Buffer.from(changed).indexOf("stored text");
    expect(at).toBeGreaterThan(30);
    changed[at] ^= 0x20;
    const se = (await listZip(memoryRangeReader(changed)))[0];
    await expectFormatError(readZipEntry(memoryRangeReader(changed), se), "corrupt_zip");
    expect(new TextDecoder().decode(await readZipEntry(memoryRangeReader(stored), se))).toBe("stored text");

    const flipped = bytes.slice();
    for (let i = 40; i < 60; i++) flipped[i] ^= 0x5a;
    await expectFormatError(
      readZipEntry(memoryRangeReader(flipped), (await listZip(memoryRangeReader(flipped)))[0]),
      "corrupt_zip",
    );
  });

  it("does not hang or crash on garbage with a fake end record", async () => {
    const rand = lcg(5);
    for (let k = 0; k < 50; k++) {
      const junk = Uint8Array.from({ length: 200 + k * 31 }, () => Math.floor(rand() * 256));
      junk.set([0x50, 0x4b, 0x05, 0x06], junk.length - 22);
      junk.set([0, 0], junk.length - 2);
      const err = await listZip(memoryRangeReader(junk)).then(
        (entries) => entries,
        (e: unknown) => e,
      );
      if (!Array.isArray(err)) expect(err).toBeInstanceOf(AttachmentFormatError);
    }
  });
});

describe("xlsx", () => {
  const book = workbook();

  it("lists sheets with rows and columns from <dimension> or a scan", async () => {
    const r = memoryRangeReader(book);
    const info = await xlsxInfo(r);
    expect(info.sheets).toEqual([
      { name: "Data", rows: 5, columns: 4 },
      { name: "Notes & More", rows: 7, columns: 5 },
      { name: "Big", rows: 60_000, columns: 2 },
    ]);
    // The big sheet's dimension comes from its first bytes, not from inflating it.
    expect(r.bytesRead).toBeLessThan(book.length / 2);
  });

  it("reads no cell past the last column a sheet may have (XFD, 16,384): a hostile row of cells stays small", async () => {
    const sheet = `<worksheet ${NS}><sheetData><row r="1">${"<c/>".repeat(20_000)}</row></sheetData></worksheet>`;
    const book = zipSync({
      "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
      "xl/workbook.xml": xml(
        `<workbook ${NS}><sheets><sheet name="Wide" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      ),
      "xl/_rels/workbook.xml.rels": xml(
        `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
      ),
      "xl/worksheets/sheet1.xml": xml(sheet),
    });
    expect((await xlsxInfo(memoryRangeReader(book))).sheets).toEqual([{ name: "Wide", rows: 1, columns: 16_384 }]);
  });

  it("reads rows resolving shared strings, inline strings, numbers and booleans", async () => {
    const out = await readXlsxRows(memoryRangeReader(book), { sheet: "Data", from: 1, to: 10 });
    expect(out.sheet).toBe("Data");
    expect(out.rows).toEqual([
      ["Name", "Amount", "Active", null],
      ["Fish & Chips", 12.5, true, null],
      [],
      ["Tōkyō", 25, false, "inline <x>"],
      ["line\rbreak", "text result", "#DIV/0!", null],
    ]);
    expect(out).toMatchObject({ from: 1, to: 5, truncated: false });
  });

  it("selects sheets by 1-based number or case-insensitive name", async () => {
    const second = await readXlsxRows(memoryRangeReader(book), { sheet: 2, from: 1, to: 7 });
    expect(second.sheet).toBe("Notes & More");
    expect(second.rows).toEqual([
      [1, 2, null, null, null],
      [3, null, null, null, null],
      [],
      [],
      [],
      [],
      [null, null, null, null, -4000],
    ]);
    expect((await readXlsxRows(memoryRangeReader(book), { sheet: "notes & more", from: 7, to: 7 })).rows).toEqual([
      [null, null, null, null, -4000],
    ]);
  });

  it("stops inflating a large sheet after the last row asked for", async () => {
    const r = memoryRangeReader(book);
    const out = await readXlsxRows(r, { sheet: "Big", from: 2, to: 4 });
    expect(out.rows.map((row) => row[0])).toEqual([2, 3, 4]);
    expect(typeof out.rows[0][1]).toBe("number");
    expect(r.bytesRead).toBeLessThan(book.length / 2);

    const tail = await readXlsxRows(memoryRangeReader(book), { sheet: "Big", from: 59_999, to: 70_000 });
    expect(tail.rows.map((row) => row[0])).toEqual([59_999, 60_000]);
    expect(tail.to).toBe(60_000);

    const capped = await readXlsxRows(memoryRangeReader(book), {
      sheet: "Big",
      from: 1,
      to: 100,
      maxRows: 10,
    });
    expect(capped).toMatchObject({ from: 1, to: 10, truncated: true });
    expect(capped.rows.length).toBe(10);
  });

  it("works the same on an uncompressed (STORED) workbook", async () => {
    const stored = workbook(0);
    expect((await xlsxInfo(memoryRangeReader(stored))).sheets.map((s) => s.rows)).toEqual([5, 7, 60_000]);
    // Rows are as wide as the widest row returned.
    expect((await readXlsxRows(memoryRangeReader(stored), { sheet: 1, from: 2, to: 2 })).rows).toEqual([
      ["Fish & Chips", 12.5, true],
    ]);
  });

  it("fails with AttachmentFormatError on bad input", async () => {
    await expectFormatError(xlsxInfo(memoryRangeReader(strToU8("name,amount\nAnn,1\n".repeat(10)))), "not_zip");
    await expectFormatError(xlsxInfo(memoryRangeReader(book.subarray(0, Math.floor(book.length * 0.6)))), "truncated");
    const err = await expectFormatError(
      readXlsxRows(memoryRangeReader(book), { sheet: "Missing", from: 1, to: 2 }),
      "sheet_not_found",
    );
    expect(err.message).toContain('"Notes & More"');
    await expectFormatError(readXlsxRows(memoryRangeReader(book), { sheet: 4, from: 1, to: 2 }), "sheet_not_found");
    await expectFormatError(
      xlsxInfo(memoryRangeReader(zipSync({ "word/document.xml": strToU8("<w:document/>") }))),
      "missing_entry",
    );
    await expectFormatError(xlsxInfo(memoryRangeReader(new Uint8Array(10))), "not_zip");
    // A DOCX whose package relationships point at its document: that is not a workbook.
    const doc = zipSync({
      "_rels/.rels": xml(
        `<Relationships><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`,
      ),
      "word/document.xml": xml("<w:document/>"),
    });
    await expectFormatError(xlsxInfo(memoryRangeReader(doc)), "missing_entry");
  });
});

describe("docx", () => {
  const body =
    `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Title</w:t></w:r></w:p>` +
    `<w:p><w:r><w:t xml:space="preserve">Name:</w:t></w:r><w:r><w:tab/><w:t>Ann &amp; Bob &lt;ok&gt; &#x263A; &#233;</w:t></w:r></w:p>` +
    `<w:p/>` +
    `<w:p><w:r><w:t>first</w:t><w:br/><w:t>second</w:t></w:r><w:proofErr w:type="spellStart"/><w:r><w:t>!</w:t></w:r></w:p>` +
    `<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell 1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>cell 2</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
    `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:t>box</w:t></mc:Choice><mc:Fallback><w:t>box</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>` +
    `<!-- a <comment> --><w:p><w:r><w:delText>deleted</w:delText><w:t>end</w:t></w:r></w:p>`;

  it("turns paragraphs into lines with tabs, breaks and decoded entities", async () => {
    const out = await docxText(memoryRangeReader(docx(body)));
    expect(out.text).toBe(
      ["Title", "Name:\tAnn & Bob <ok> ☺ é", "", "first\nsecond!", "cell 1", "cell 2", "box", "end"].join("\n"),
    );
    expect(out.paragraphs).toBe(8);
    expect(out.truncated).toBe(false);
  });

  it("caps the text at maxChars but still counts every paragraph", async () => {
    const many = Array.from({ length: 500 }, (_, i) => `<w:p><w:r><w:t>paragraph ${i}</w:t></w:r></w:p>`).join("");
    const out = await docxText(memoryRangeReader(docx(many)), { maxChars: 25 });
    expect(out.text).toBe("paragraph 0\nparagraph 1\np");
    expect(out.text.length).toBe(25);
    expect(out.truncated).toBe(true);
    expect(out.paragraphs).toBe(500);
  });

  it("reads from a char offset: the same text as a whole read, without keeping what comes before", async () => {
    const many = Array.from({ length: 500 }, (_, i) => `<w:p><w:r><w:t>paragraph ${i}</w:t></w:r></w:p>`).join("");
    const whole = (await docxText(memoryRangeReader(docx(many)), { maxChars: 1_000_000 })).text;
    for (const from of [0, 1, 11, 12, 13, 3000, whole.length - 5, whole.length, whole.length + 10]) {
      const page = await docxText(memoryRangeReader(docx(many)), { fromChar: from, maxChars: from + 40 });
      expect(page.text, `from ${from}`).toBe(whole.slice(from, from + 40));
    }
    // A page read stops at its cap: it does not go on counting the rest of a long document.
    const long = Array.from({ length: 40_000 }, (_, i) => `<w:p><w:r><w:t>line ${i}</w:t></w:r></w:p>`).join("");
    const deep = await docxText(memoryRangeReader(docx(long)), { fromChar: 100, maxChars: 140 });
    expect(deep.text).toBe(
      Array.from({ length: 40 }, (_, i) => `line ${i}`)
        .join("\n")
        .slice(100, 140),
    );
    expect(deep.truncated).toBe(true);
    expect(deep.paragraphs).toBeLessThan(40_000);
    expect((await docxText(memoryRangeReader(docx(long)), { maxChars: 140 })).paragraphs).toBe(40_000);
  });

  it("reads deep into one long paragraph from an offset, text boxes included, as a whole read gives it", async () => {
    const runs = Array.from(
      { length: 400 },
      (_, i) => `<w:r><w:t>${String(i).padStart(4, "0")}${"b".repeat(996)}</w:t></w:r>`,
    );
    // A text box (its own paragraph, written out before the one around it) deep in the long one.
    runs.splice(300, 0, `<w:r><w:txbxContent><w:p><w:r><w:t>boxed words</w:t></w:r></w:p></w:txbxContent></w:r>`);
    const body = `<w:p><w:r><w:t>first</w:t></w:r></w:p><w:p>${runs.join("")}</w:p><w:p><w:r><w:t>last</w:t></w:r></w:p>`;
    const whole = (await docxText(memoryRangeReader(docx(body)), { maxChars: 10_000_000 })).text;
    expect(whole.length).toBeGreaterThan(400_000);
    for (const from of [0, 150_000, 299_990, 350_000, whole.length - 3, whole.length + 5, 1e12]) {
      const page = await docxText(memoryRangeReader(docx(body)), { fromChar: from, maxChars: from + 40_001 });
      expect(page.text, `from ${from}`).toBe(whole.slice(from, from + 40_001));
    }
  });

  it("caps one paragraph of many runs as it reads it, and counts what follows", async () => {
    const runs = `<w:r><w:t>${"a".repeat(1000)}</w:t></w:r>`.repeat(5000);
    const out = await docxText(memoryRangeReader(docx(`<w:p>${runs}</w:p><w:p><w:r><w:t>after</w:t></w:r></w:p>`)), {
      maxChars: 10,
    });
    expect(out.text).toBe("a".repeat(10));
    expect(out.truncated).toBe(true);
    expect(out.paragraphs).toBe(2);
  });

  it("fails with AttachmentFormatError when it is not a DOCX", async () => {
    await expectFormatError(docxText(memoryRangeReader(workbook())), "missing_entry");
    await expectFormatError(docxText(memoryRangeReader(strToU8("just text"))), "not_zip");
    const d = docx(body);
    await expectFormatError(docxText(memoryRangeReader(d.subarray(0, d.length - 30))), "truncated");
  });
});
