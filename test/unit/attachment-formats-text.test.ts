// Text attachments: the line index (checkpoints, ranged line reads, encodings, text vs binary)
// and CSV/TSV parsing over it.
import { strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { delimitedInfo, parseDelimitedLine, readRows } from "../../services/attachments/formats/spreadsheet/delimited";
import {
  isProbablyText,
  LineIndexer,
  readLines,
  type LineIndex,
} from "../../services/attachments/formats/text/line-index";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { lcg, tinyPng, u8 } from "./format-bytes";

function indexOf(bytes: Uint8Array, every = 1000, chunk = 65536): LineIndex {
  const ix = new LineIndexer(every);
  for (let i = 0; i < bytes.length; i += chunk) ix.push(bytes.subarray(i, i + chunk));
  return ix.finish();
}

describe("line index", () => {
  const N = 200_000;
  const textLines = Array.from({ length: N }, (_, i) => `line ${i + 1} marmot${i + 1}`);
  const big = strToU8(`${textLines.join("\n")}\n`);

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
    const out = await readLines(r, { index, from: 199_990, to: 199_992 });
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
    expect(await readLines(r, { index, from: 2, to: 99 })).toMatchObject({ lines: ["b", "c"], from: 2, to: 3 });
    const past = await readLines(r, { index, from: 4, to: 10 });
    expect(past).toMatchObject({ lines: [], pastEnd: true, totalLines: 3, from: 4, to: 3, bytesRead: 0 });
    expect(await readLines(r, { index, from: 0, to: 1 })).toMatchObject({ lines: ["a"], from: 1, to: 1 });
  });

  it("handles CRLF, a final line without newline, empty lines and a BOM", async () => {
    const bytes = strToU8("\ufefffirst\r\n\r\nthird\r\nlast");
    const index = indexOf(bytes, 2);
    expect(index.lines).toBe(4);
    const out = await readLines(memoryRangeReader(bytes), { index, from: 1, to: 4 });
    expect(out.lines).toEqual(["first", "", "third", "last"]);
    expect(indexOf(strToU8(""), 5)).toEqual({
      lines: 0,
      bytes: 0,
      every: 5,
      offsets: [0],
      marks: [],
      markBytes: 1024 * 1024,
    });
    expect(indexOf(strToU8("x"), 5).lines).toBe(1);
    expect(indexOf(strToU8("\n\n"), 5).lines).toBe(2);
  });

  it("decodes UTF-8 characters split across read boundaries", async () => {
    const lines = Array.from({ length: 50 }, (_, i) => `${i}: héllo wörld — 日本語 🦫 ${"é".repeat(i % 7)}`);
    const bytes = strToU8(lines.join("\n"));
    const index = indexOf(bytes, 4, 7);
    for (const chunkBytes of [1, 2, 3, 5, 64]) {
      const out = await readLines(memoryRangeReader(bytes), { index, from: 3, to: 50, chunkBytes });
      expect(out.lines).toEqual(lines.slice(2));
    }
  });

  it("caps the returned text at maxBytes without splitting a character", async () => {
    const bytes = strToU8(Array.from({ length: 100 }, () => "ééééé").join("\n"));
    const index = indexOf(bytes, 10);
    const out = await readLines(memoryRangeReader(bytes), { index, from: 1, to: 100, maxBytes: 36 });
    // Each line is 10 bytes + 1 for its newline: three fit (33), the fourth is cut to one "é".
    expect(out.truncated).toBe(true);
    expect(out.lines).toEqual(["ééééé", "ééééé", "ééééé", "é"]);
    expect(out.to).toBe(4);
    const whole = await readLines(memoryRangeReader(bytes), { index, from: 1, to: 100 });
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
    const cut = strToU8(`${"a".repeat(8190)}日`);
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

  const csv = `${["name,quote,amount", 'Ann,"Hello, world",1.5', 'Bob,"She said ""no""",2', "Cy,plain,3", '"Dee, Jr.",,4', ""].join("\r\n")}\r\n`;

  it("gives columns and rows, ignoring a trailing empty line", async () => {
    const bytes = strToU8(csv);
    const index = indexOf(bytes, 2);
    expect(index.lines).toBe(6); // five lines and the trailing empty one
    expect(await delimitedInfo(memoryRangeReader(bytes), index, ",")).toEqual({
      columns: ["name", "quote", "amount"],
      rows: 4,
    });
    const noTrail = strToU8("h1,h2\n1,2\n3,4");
    expect(await delimitedInfo(memoryRangeReader(noTrail), indexOf(noTrail), ",")).toEqual({
      columns: ["h1", "h2"],
      rows: 2,
    });
  });

  it("reads data rows by number with the header", async () => {
    const bytes = strToU8(csv);
    const out = await readRows(memoryRangeReader(bytes), { index: indexOf(bytes, 2), delimiter: ",", from: 2, to: 10 });
    expect(out.header).toEqual(["name", "quote", "amount"]);
    expect(out.rows).toEqual([
      ["Bob", 'She said "no"', "2"],
      ["Cy", "plain", "3"],
      ["Dee, Jr.", "", "4"],
    ]);
    expect(out).toMatchObject({ from: 2, to: 4, totalRows: 4, truncated: false });
    const tsv = strToU8('a\tb\n1\t"x\ty"\n');
    expect(
      (await readRows(memoryRangeReader(tsv), { index: indexOf(tsv), delimiter: "\t", from: 1, to: 1 })).rows,
    ).toEqual([["1", "x\ty"]]);
  });
});

describe("reading on inside one long line", () => {
  it("gives a line past the cap in pieces that join to the whole, never splitting a character", async () => {
    const long = `${"é".repeat(150_000)}x${"ü".repeat(150_000)}END`;
    const bytes = strToU8(`first\n${long}\nlast\n`);
    const index = indexOf(bytes, 1000, 4096);
    const r = memoryRangeReader(bytes);
    const pieces: string[] = [];
    let skipBytes = 0;
    for (let n = 0; n < 10; n++) {
      const out = await readLines(r, { index, from: 2, to: 3, maxBytes: 100_000, chunkBytes: 4096, skipBytes });
      pieces.push(out.lines[0]);
      if (out.cutAtByte === undefined) {
        expect(out.lines).toEqual([pieces.at(-1), "last"]);
        break;
      }
      expect(out.to).toBe(2);
      skipBytes = out.cutAtByte;
    }
    expect(pieces.join("")).toBe(long);
    expect(pieces.join("")).not.toContain("\uFFFD");
    // An offset inside a character starts at the next one.
    const odd = await readLines(r, { index, from: 2, to: 2, maxBytes: 10, skipBytes: 1 });
    expect(odd.lines[0]).toBe("ééééé");
  });
});
