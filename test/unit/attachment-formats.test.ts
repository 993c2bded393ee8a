import { strToU8, zipSync, zlibSync, type Zippable } from "fflate";
import { describe, expect, it } from "vitest";
import { delimitedInfo, parseDelimitedLine, readRows } from "../../services/attachments/formats/spreadsheet/delimited";
import { docxText } from "../../services/attachments/formats/document/docx";
import { AttachmentFormatError } from "../../services/attachments/formats/shared/errors";
import { imageInfo, imageInfoFromReader } from "../../services/attachments/formats/image/image-info";
import { sniffType } from "../../services/attachments/formats/sniff";
import { isProbablyText, LineIndexer, readLines, type LineIndex } from "../../services/attachments/formats/text/line-index";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { readXlsxRows, xlsxInfo } from "../../services/attachments/formats/spreadsheet/xlsx";
import { listZip, readZipEntry } from "../../services/attachments/formats/shared/zip";

const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

// ---------- byte helpers ----------

const u8 = (...parts: (number[] | Uint8Array | string)[]): Uint8Array => {
  const arrays = parts.map((p) => (typeof p === "string" ? strToU8(p) : p instanceof Uint8Array ? p : Uint8Array.from(p)));
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
};
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const be16 = (n: number) => [(n >>> 8) & 255, n & 255];
const le16 = (n: number) => [n & 255, (n >>> 8) & 255];
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];

function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const body = u8(type, data);
  return u8(be32(data.length), body, be32(crc32(body)));
}

/** A complete, valid PNG: RGBA, 8 bits, filter byte 0 on each row. */
function tinyPng(width: number, height: number): Uint8Array {
  const raw = new Uint8Array(height * (1 + width * 4)).fill(0x7f);
  for (let y = 0; y < height; y++) raw[y * (1 + width * 4)] = 0;
  return u8([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], pngChunk("IHDR", u8(be32(width), be32(height), [8, 6, 0, 0, 0])), pngChunk("IDAT", zlibSync(raw)), pngChunk("IEND", new Uint8Array(0)));
}

const jpegSegment = (marker: number, payload: Uint8Array) => u8([0xff, marker], be16(payload.length + 2), payload);

/** A JPEG header: APP0, `appBytes` of APP1 metadata (in 60 KB segments), DQT, then the frame header. */
function jpeg(width: number, height: number, appBytes: number, sofMarker = 0xc0): Uint8Array {
  const apps: Uint8Array[] = [];
  for (let left = appBytes; left > 0; left -= 60_000) apps.push(jpegSegment(0xe1, new Uint8Array(Math.min(60_000, left)).fill(0x45)));
  return u8(
    [0xff, 0xd8],
    jpegSegment(0xe0, u8("JFIF\0", [1, 1, 0, 0, 1, 0, 1, 0, 0])),
    ...apps,
    jpegSegment(0xdb, new Uint8Array(65)),
    jpegSegment(sofMarker, u8([8], be16(height), be16(width), [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])),
    jpegSegment(0xda, new Uint8Array(10)),
    new Uint8Array(100),
    [0xff, 0xd9],
  );
}

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

async function expectFormatError(p: Promise<unknown>, code: string): Promise<AttachmentFormatError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AttachmentFormatError);
  expect((err as AttachmentFormatError).code).toBe(code);
  return err as AttachmentFormatError;
}

// ---------- images and type sniffing ----------

describe("imageInfo", () => {
  it("reads PNG dimensions from the IHDR of a real tiny PNG", () => {
    expect(imageInfo(tinyPng(3, 2))).toEqual({ format: "png", width: 3, height: 2 });
    expect(imageInfo(tinyPng(1920, 1080).subarray(0, 24))).toEqual({ format: "png", width: 1920, height: 1080 });
    expect(imageInfo(tinyPng(3, 2).subarray(0, 20))).toBeNull();
  });

  it("reads GIF, WebP (VP8, VP8L, VP8X) and BMP headers", () => {
    expect(imageInfo(u8("GIF89a", le16(320), le16(200), [0xf7, 0, 0]))).toEqual({ format: "gif", width: 320, height: 200 });
    expect(imageInfo(u8("GIF87a", le16(1), le16(65535)))).toEqual({ format: "gif", width: 1, height: 65535 });

    const vp8 = u8("RIFF", le32(100), "WEBP", "VP8 ", le32(80), [0x10, 0x02, 0x00], [0x9d, 0x01, 0x2a], le16(640), le16(480));
    expect(imageInfo(vp8)).toEqual({ format: "webp", width: 640, height: 480 });
    const w = 1000 - 1;
    const h = 750 - 1;
    const bits = (w | (h << 14)) >>> 0;
    const vp8l = u8("RIFF", le32(100), "WEBP", "VP8L", le32(80), [0x2f], le32(bits));
    expect(imageInfo(vp8l)).toEqual({ format: "webp", width: 1000, height: 750 });
    const vp8x = u8("RIFF", le32(100), "WEBP", "VP8X", le32(10), [0x10, 0, 0, 0], [(4000 - 1) & 255, ((4000 - 1) >> 8) & 255, 0], [(3000 - 1) & 255, ((3000 - 1) >> 8) & 255, 0]);
    expect(imageInfo(vp8x)).toEqual({ format: "webp", width: 4000, height: 3000 });

    const bmp = u8("BM", le32(1000), le32(0), le32(54), le32(40), le32(123), le32(-45 >>> 0), le16(1), le16(24));
    expect(imageInfo(bmp)).toEqual({ format: "bmp", width: 123, height: 45 });
  });

  it("walks JPEG segments to the frame header, including progressive (SOF2)", () => {
    expect(imageInfo(jpeg(640, 480, 0))).toEqual({ format: "jpeg", width: 640, height: 480 });
    expect(imageInfo(jpeg(800, 600, 1000, 0xc2))).toEqual({ format: "jpeg", width: 800, height: 600 });
    // DHT (0xC4) is in the SOF range but is not a frame header.
    const withDht = u8([0xff, 0xd8], jpegSegment(0xc4, new Uint8Array(20).fill(0x33)), jpegSegment(0xc0, u8([8], be16(7), be16(9), [1, 1, 0x11, 0])));
    expect(imageInfo(withDht)).toEqual({ format: "jpeg", width: 9, height: 7 });
  });

  it("finds a late JPEG frame header through growing prefixes, never past 256 KB", async () => {
    const late = jpeg(4032, 3024, 150_000);
    expect(imageInfo(late.subarray(0, 4096))).toBeNull();
    const r = memoryRangeReader(late);
    expect(await imageInfoFromReader(r)).toEqual({ format: "jpeg", width: 4032, height: 3024 });
    expect(r.bytesRead).toBeLessThanOrEqual(256 * 1024);
    expect(r.bytesRead).toBeGreaterThan(150_000);

    const tooLate = memoryRangeReader(jpeg(10, 10, 400_000));
    expect(await imageInfoFromReader(tooLate)).toBeNull();
    expect(tooLate.bytesRead).toBeLessThanOrEqual(256 * 1024);

    const png = memoryRangeReader(tinyPng(5, 7));
    expect(await imageInfoFromReader(png)).toEqual({ format: "png", width: 5, height: 7 });
    expect(png.calls).toBe(1);
  });

  it("returns null on garbage without hanging", () => {
    const rand = lcg(7);
    for (let k = 0; k < 200; k++) {
      const junk = Uint8Array.from({ length: 64 + k * 13 }, () => Math.floor(rand() * 256));
      junk.set([0xff, 0xd8, 0xff]);
      const info = imageInfo(junk);
      if (info) expect(info.format).toBe("jpeg");
    }
    expect(imageInfo(u8([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01]))).toBeNull(); // segment length < 2
    expect(imageInfo(strToU8("hello world"))).toBeNull();
    expect(imageInfo(u8("BMhello there, not a bitmap header"))).toBeNull();
  });
});

describe("sniffType", () => {
  const zipBytes = zipSync({ "a.txt": strToU8("x") });
  it("trusts magic bytes over the name and the declared type", () => {
    expect(sniffType(strToU8("%PDF-1.7\n%âãÏÓ"), "report.txt", "text/plain")).toBe("application/pdf");
    expect(sniffType(tinyPng(1, 1), "photo.jpg", "image/jpeg")).toBe("image/png");
    expect(sniffType(jpeg(1, 1, 0), "x", null)).toBe("image/jpeg");
    expect(sniffType(u8("GIF89a", le16(1), le16(1)), "x.bin", null)).toBe("image/gif");
    expect(sniffType(u8("RIFF", le32(4), "WEBP", "VP8L"), "x", null)).toBe("image/webp");
  });

  it("decides ZIP-based office types by extension", () => {
    expect(sniffType(zipBytes, "Budget.XLSX", null)).toBe(XLSX_TYPE);
    expect(sniffType(zipBytes, "letter.docx", "application/octet-stream")).toBe(DOCX_TYPE);
    expect(sniffType(zipBytes, "archive.zip", null)).toBe("application/zip");
    expect(sniffType(zipBytes, "upload", XLSX_TYPE)).toBe(XLSX_TYPE);
  });

  it("falls back to the extension, then the declared type, then octet-stream", () => {
    const text = strToU8("hello, world\n");
    expect(sniffType(text, "notes.md", null)).toBe("text/markdown");
    expect(sniffType(text, "data.csv", "application/vnd.ms-excel")).toBe("text/csv");
    expect(sniffType(text, "data.TSV", null)).toBe("text/tab-separated-values");
    expect(sniffType(text, "a.json", null)).toBe("application/json");
    expect(sniffType(text, "server.log", null)).toBe("text/plain");
    expect(sniffType(text, "main.ts", "video/mp2t")).toBe("text/x-typescript");
    expect(sniffType(text, "script.py", null)).toBe("text/x-python");
    expect(sniffType(text, "thing.custom", "application/x-custom; charset=binary")).toBe("application/x-custom");
    expect(sniffType(text, "README", null)).toBe("application/octet-stream");
    // A declared type whose magic the bytes lack is not believed.
    expect(sniffType(text, "fake.png", "image/png")).toBe("application/octet-stream");
    expect(sniffType(text, "fake.xlsx", XLSX_TYPE)).toBe("application/octet-stream");
  });
});

// ---------- line index ----------

function indexOf(bytes: Uint8Array, every = 1000, chunk = 65536): LineIndex {
  const ix = new LineIndexer(every);
  for (let i = 0; i < bytes.length; i += chunk) ix.push(bytes.subarray(i, i + chunk));
  return ix.finish();
}

describe("line index", () => {
  const N = 200_000;
  const textLines = Array.from({ length: N }, (_, i) => `line ${i + 1} marmot${i + 1}`);
  const big = strToU8(textLines.join("\n") + "\n");

  it("indexes 200,000 lines with a checkpoint every 1,000", () => {
    const index = indexOf(big);
    expect(index.lines).toBe(N);
    expect(index.bytes).toBe(big.length);
    expect(index.every).toBe(1000);
    expect(index.offsets.length).toBe(200);
    const expected = textLines.slice(0, 199_000).reduce((n, l) => n + l.length + 1, 0);
    expect(index.offsets[199]).toBe(expected);
    expect(index.offsets[0]).toBe(0);
  });

  it("reads lines 199,990-199,992 exactly, with under 200 KB read", async () => {
    const index = indexOf(big);
    const r = memoryRangeReader(big);
    const out = await readLines(r, index, 199_990, 199_992);
    expect(out.lines).toEqual(["line 199990 marmot199990", "line 199991 marmot199991", "line 199992 marmot199992"]);
    expect(out).toMatchObject({ from: 199_990, to: 199_992, truncated: false, pastEnd: false, totalLines: N });
    expect(r.bytesRead).toBeLessThan(200 * 1024);
    expect(out.bytesRead).toBe(r.bytesRead);
    expect(r.calls).toBe(1);
  });

  it("builds the same index whatever the chunking", () => {
    const sample = big.subarray(0, 300_000);
    const whole = indexOf(sample, 100, sample.length);
    const rand = lcg(3);
    const ix = new LineIndexer(100);
    for (let i = 0; i < sample.length; ) {
      const n = 1 + Math.floor(rand() * 5000);
      ix.push(sample.subarray(i, i + n));
      i += n;
    }
    expect(ix.finish()).toEqual(whole);
    expect(whole.offsets.length).toBeGreaterThan(100);
  });

  it("clamps ranges and says when from is past the end", async () => {
    const bytes = strToU8("a\nb\nc\n");
    const index = indexOf(bytes, 2);
    const r = memoryRangeReader(bytes);
    expect(index.lines).toBe(3);
    expect(await readLines(r, index, 2, 99)).toMatchObject({ lines: ["b", "c"], from: 2, to: 3 });
    const past = await readLines(r, index, 4, 10);
    expect(past).toMatchObject({ lines: [], pastEnd: true, totalLines: 3, from: 4, to: 3, bytesRead: 0 });
    expect(await readLines(r, index, 0, 1)).toMatchObject({ lines: ["a"], from: 1, to: 1 });
  });

  it("handles CRLF, a final line without newline, empty lines and a BOM", async () => {
    const bytes = strToU8("\ufefffirst\r\n\r\nthird\r\nlast");
    const index = indexOf(bytes, 2);
    expect(index.lines).toBe(4);
    const out = await readLines(memoryRangeReader(bytes), index, 1, 4);
    expect(out.lines).toEqual(["first", "", "third", "last"]);
    expect(indexOf(strToU8(""), 5)).toEqual({ lines: 0, bytes: 0, every: 5, offsets: [0] });
    expect(indexOf(strToU8("x"), 5).lines).toBe(1);
    expect(indexOf(strToU8("\n\n"), 5).lines).toBe(2);
  });

  it("decodes UTF-8 characters split across read boundaries", async () => {
    const lines = Array.from({ length: 50 }, (_, i) => `${i}: héllo wörld — 日本語 🦫 ${"é".repeat(i % 7)}`);
    const bytes = strToU8(lines.join("\n"));
    const index = indexOf(bytes, 4, 7);
    for (const chunkBytes of [1, 2, 3, 5, 64]) {
      const out = await readLines(memoryRangeReader(bytes), index, 3, 50, { chunkBytes });
      expect(out.lines).toEqual(lines.slice(2));
    }
  });

  it("caps the returned text at maxBytes without splitting a character", async () => {
    const bytes = strToU8(Array.from({ length: 100 }, () => "ééééé").join("\n"));
    const index = indexOf(bytes, 10);
    const out = await readLines(memoryRangeReader(bytes), index, 1, 100, { maxBytes: 36 });
    // Each line is 10 bytes + 1 for its newline: three fit (33), the fourth is cut to one "é".
    expect(out.truncated).toBe(true);
    expect(out.lines).toEqual(["ééééé", "ééééé", "ééééé", "é"]);
    expect(out.to).toBe(4);
    const whole = await readLines(memoryRangeReader(bytes), index, 1, 100);
    expect(whole.truncated).toBe(false);
    expect(whole.lines.length).toBe(100);
  });

  it("tells text from binary by the first 8 KB", () => {
    expect(isProbablyText(strToU8("plain ascii\nwith lines\ttabs\n"))).toBe(true);
    expect(isProbablyText(strToU8("naïve café — 日本語 🦫\n".repeat(50)))).toBe(true);
    expect(isProbablyText(u8("hello", [0], "world"))).toBe(false);
    expect(isProbablyText(tinyPng(4, 4))).toBe(false);
    const rand = lcg(11);
    expect(isProbablyText(Uint8Array.from({ length: 4096 }, () => 1 + Math.floor(rand() * 255)))).toBe(false);
    // A multi-byte character cut by the end of the sample is not an error.
    const cut = strToU8("a".repeat(8190) + "日");
    expect(isProbablyText(cut.subarray(0, 8192))).toBe(true);
    // NUL after the first 8 KB is not looked at.
    expect(isProbablyText(u8("b".repeat(8192), [0]))).toBe(true);
  });
});

// ---------- CSV / TSV ----------

describe("delimited", () => {
  it("parses RFC 4180 quoting", () => {
    expect(parseDelimitedLine('a,"b,c","say ""hi""",,"",x', ",")).toEqual(["a", "b,c", 'say "hi"', "", "", "x"]);
    expect(parseDelimitedLine("a\tb c\t", "\t")).toEqual(["a", "b c", ""]);
    expect(parseDelimitedLine('"unterminated,still one', ",")).toEqual(["unterminated,still one"]);
    expect(parseDelimitedLine("", ",")).toEqual([""]);
  });

  const csv = ['name,quote,amount', 'Ann,"Hello, world",1.5', 'Bob,"She said ""no""",2', 'Cy,plain,3', '"Dee, Jr.",,4', ""].join("\r\n") + "\r\n";

  it("gives columns and rows, ignoring a trailing empty line", async () => {
    const bytes = strToU8(csv);
    const index = indexOf(bytes, 2);
    expect(index.lines).toBe(6); // five lines and the trailing empty one
    expect(await delimitedInfo(memoryRangeReader(bytes), index, ",")).toEqual({ columns: ["name", "quote", "amount"], rows: 4 });
    const noTrail = strToU8("h1,h2\n1,2\n3,4");
    expect(await delimitedInfo(memoryRangeReader(noTrail), indexOf(noTrail), ",")).toEqual({ columns: ["h1", "h2"], rows: 2 });
  });

  it("reads data rows by number with the header", async () => {
    const bytes = strToU8(csv);
    const out = await readRows(memoryRangeReader(bytes), indexOf(bytes, 2), ",", 2, 10);
    expect(out.header).toEqual(["name", "quote", "amount"]);
    expect(out.rows).toEqual([
      ["Bob", 'She said "no"', "2"],
      ["Cy", "plain", "3"],
      ["Dee, Jr.", "", "4"],
    ]);
    expect(out).toMatchObject({ from: 2, to: 4, totalRows: 4, truncated: false });
    const tsv = strToU8("a\tb\n1\t\"x\ty\"\n");
    expect((await readRows(memoryRangeReader(tsv), indexOf(tsv), "\t", 1, 1)).rows).toEqual([["1", "x\ty"]]);
  });
});

// ---------- ZIP, XLSX ----------

const xml = (s: string) => strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`);
const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

function bigSheetRows(n: number): string {
  const rand = lcg(42);
  let out = "";
  for (let r = 1; r <= n; r++) out += `<row r="${r}"><c r="A${r}"><v>${r}</v></c><c r="B${r}"><v>${Math.floor(rand() * 1e9)}</v></c></row>`;
  return out;
}

function workbook(level: 0 | 6 = 6): Uint8Array {
  const files: Zippable = {
    "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "_rels/.rels": xml(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
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
    "xl/worksheets/sheet2.xml": xml(`<worksheet ${NS}><sheetData><row><c><v>1</v></c><c><v>2</v></c></row><row><c><v>3</v></c></row><row r="7"><c r="E7"><v>-4e3</v></c></row></sheetData></worksheet>`),
    "xl/worksheets/sheet3.xml": xml(`<worksheet ${NS}><dimension ref="A1:B60000"/><sheetData>${bigSheetRows(60_000)}</sheetData></worksheet>`),
  };
  return zipSync(files, { level });
}

describe("zip", () => {
  it("lists entries and reads STORED and DEFLATE entries", async () => {
    for (const level of [0, 6] as const) {
      const bytes = zipSync({ "a.txt": strToU8("alpha ".repeat(1000)), "dir/b.bin": new Uint8Array([1, 2, 3]) }, { level });
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
    await expectFormatError(readZipEntry(memoryRangeReader(flipped), (await listZip(memoryRangeReader(flipped)))[0]), "corrupt_zip");
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

  it("reads rows resolving shared strings, inline strings, numbers and booleans", async () => {
    const out = await readXlsxRows(memoryRangeReader(book), "Data", 1, 10);
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
    const second = await readXlsxRows(memoryRangeReader(book), 2, 1, 7);
    expect(second.sheet).toBe("Notes & More");
    expect(second.rows).toEqual([[1, 2, null, null, null], [3, null, null, null, null], [], [], [], [], [null, null, null, null, -4000]]);
    expect((await readXlsxRows(memoryRangeReader(book), "notes & more", 7, 7)).rows).toEqual([[null, null, null, null, -4000]]);
  });

  it("stops inflating a large sheet after the last row asked for", async () => {
    const r = memoryRangeReader(book);
    const out = await readXlsxRows(r, "Big", 2, 4);
    expect(out.rows.map((row) => row[0])).toEqual([2, 3, 4]);
    expect(typeof out.rows[0][1]).toBe("number");
    expect(r.bytesRead).toBeLessThan(book.length / 2);

    const tail = await readXlsxRows(memoryRangeReader(book), "Big", 59_999, 70_000);
    expect(tail.rows.map((row) => row[0])).toEqual([59_999, 60_000]);
    expect(tail.to).toBe(60_000);

    const capped = await readXlsxRows(memoryRangeReader(book), "Big", 1, 100, { maxRows: 10 });
    expect(capped).toMatchObject({ from: 1, to: 10, truncated: true });
    expect(capped.rows.length).toBe(10);
  });

  it("works the same on an uncompressed (STORED) workbook", async () => {
    const stored = workbook(0);
    expect((await xlsxInfo(memoryRangeReader(stored))).sheets.map((s) => s.rows)).toEqual([5, 7, 60_000]);
    // Rows are as wide as the widest row returned.
    expect((await readXlsxRows(memoryRangeReader(stored), 1, 2, 2)).rows).toEqual([["Fish & Chips", 12.5, true]]);
  });

  it("fails with AttachmentFormatError on bad input", async () => {
    await expectFormatError(xlsxInfo(memoryRangeReader(strToU8("name,amount\nAnn,1\n".repeat(10)))), "not_zip");
    await expectFormatError(xlsxInfo(memoryRangeReader(book.subarray(0, Math.floor(book.length * 0.6)))), "truncated");
    const err = await expectFormatError(readXlsxRows(memoryRangeReader(book), "Missing", 1, 2), "sheet_not_found");
    expect(err.message).toContain('"Notes & More"');
    await expectFormatError(readXlsxRows(memoryRangeReader(book), 4, 1, 2), "sheet_not_found");
    await expectFormatError(xlsxInfo(memoryRangeReader(zipSync({ "word/document.xml": strToU8("<w:document/>") }))), "missing_entry");
    await expectFormatError(xlsxInfo(memoryRangeReader(new Uint8Array(10))), "not_zip");
    // A DOCX whose package relationships point at its document: that is not a workbook.
    const doc = zipSync({
      "_rels/.rels": xml(`<Relationships><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`),
      "word/document.xml": xml("<w:document/>"),
    });
    await expectFormatError(xlsxInfo(memoryRangeReader(doc)), "missing_entry");
  });
});

// ---------- DOCX ----------

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"';

function docx(body: string): Uint8Array {
  return zipSync({
    "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "word/document.xml": xml(`<w:document ${W}><w:body>${body}<w:sectPr/></w:body></w:document>`),
  });
}

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
    expect(out.text).toBe(["Title", "Name:\tAnn & Bob <ok> ☺ é", "", "first\nsecond!", "cell 1", "cell 2", "box", "end"].join("\n"));
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

  it("fails with AttachmentFormatError when it is not a DOCX", async () => {
    await expectFormatError(docxText(memoryRangeReader(workbook())), "missing_entry");
    await expectFormatError(docxText(memoryRangeReader(strToU8("just text"))), "not_zip");
    const d = docx(body);
    await expectFormatError(docxText(memoryRangeReader(d.subarray(0, d.length - 30))), "truncated");
  });
});
