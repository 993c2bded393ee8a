// Lines that end in a lone CR (classic Mac OS text, Excel for Mac's "CSV (Macintosh)"): the index
// finds the terminator from the file's first bytes and every line reader splits on it. LF and CRLF
// files read as before, and an index stored before the terminator was recorded reads as LF.
import { strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { delimitedInfo, readRows } from "../../services/attachments/formats/spreadsheet/delimited";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { type LineIndex, LineIndexer, readLines } from "../../services/attachments/formats/text/line-index";
import { lcg } from "./format-bytes";

function indexOf(
  bytes: Uint8Array,
  { every = 1000, chunk = 65536, markBytes }: { every?: number; chunk?: number; markBytes?: number } = {},
): LineIndex {
  const ix = new LineIndexer(every, markBytes ? { markBytes } : {});
  for (let i = 0; i < bytes.length; i += chunk) ix.push(bytes.subarray(i, i + chunk));
  return ix.finish();
}

const salaries = `name,salary\r${Array.from({ length: 30 }, (_, i) => `employee${i},${50_000 + i * 1000}`).join("\r")}\r`;

describe("line index: CR line endings", () => {
  it("counts and reads CR-terminated lines, whatever the chunking", async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i + 1} ${"x".repeat(i % 13)}`);
    const bytes = strToU8(`${lines.join("\r")}\r`);
    const whole = indexOf(bytes, { every: 7, chunk: bytes.length });
    expect(whole).toMatchObject({ lines: 500, lineEnd: "cr", bytes: bytes.length });
    const rand = lcg(5);
    const ix = new LineIndexer(7);
    for (let i = 0; i < bytes.length; ) {
      const n = 1 + Math.floor(rand() * 40);
      ix.push(bytes.subarray(i, i + n));
      i += n;
    }
    expect(ix.finish()).toEqual(whole);
    for (const chunkBytes of [1, 3, 64, 65536]) {
      const out = await readLines(memoryRangeReader(bytes), { index: whole, from: 240, to: 260, chunkBytes });
      expect(out.lines).toEqual(lines.slice(239, 260));
      expect(out).toMatchObject({ from: 240, to: 260, truncated: false, totalLines: 500 });
    }
    const all = await readLines(memoryRangeReader(bytes), { index: whole, from: 1, to: 500 });
    expect(all.lines).toEqual(lines);
  });

  it("keeps empty lines, a final line without a terminator and a BOM", async () => {
    const bytes = strToU8("\ufefffirst\r\rthird\rlast");
    const index = indexOf(bytes, { every: 2 });
    expect(index).toMatchObject({ lines: 4, lineEnd: "cr" });
    expect((await readLines(memoryRangeReader(bytes), { index, from: 1, to: 4 })).lines).toEqual([
      "first",
      "",
      "third",
      "last",
    ]);
    expect(indexOf(strToU8("\r\r")).lines).toBe(2);
    expect(indexOf(strToU8("x\r")).lines).toBe(1);
  });

  it("finds CR lines after a first line longer than the bytes it decides on", async () => {
    const long = "w".repeat(200_000);
    const bytes = strToU8(`${long}\rsecond\rthird`);
    const index = indexOf(bytes, { chunk: 4096 });
    expect(index).toMatchObject({ lines: 3, lineEnd: "cr" });
    expect((await readLines(memoryRangeReader(bytes), { index, from: 2, to: 3 })).lines).toEqual(["second", "third"]);
  });

  it("leaves LF and CRLF files as they were: a lone CR in a line is text, not a line end", async () => {
    // A terminal log: progress redrawn with CR on one line, lines ended by LF.
    const log = strToU8("fetch 10%\rfetch 50%\rfetch 100%\ndone\n");
    const index = indexOf(log, { every: 2 });
    expect(index.lineEnd).toBeUndefined();
    expect(index.lines).toBe(2);
    expect((await readLines(memoryRangeReader(log), { index, from: 1, to: 2 })).lines).toEqual([
      "fetch 10%\rfetch 50%\rfetch 100%",
      "done",
    ]);
    const crlf = strToU8("a\r\nb\r\nc");
    const crlfIndex = indexOf(crlf, { chunk: 1 });
    expect(crlfIndex).toEqual({ lines: 3, bytes: 7, every: 1000, offsets: [0], marks: [], markBytes: 1024 * 1024 });
    expect((await readLines(memoryRangeReader(crlf), { index: crlfIndex, from: 1, to: 3 })).lines).toEqual([
      "a",
      "b",
      "c",
    ]);
  });

  it("reads an index stored before line ends were recorded as LF", async () => {
    const bytes = strToU8("a\rb\nc\n");
    // As stored by an older build: no lineEnd field.
    const old: LineIndex = { lines: 2, bytes: bytes.length, every: 1000, offsets: [0], marks: [], markBytes: 1 << 20 };
    expect((await readLines(memoryRangeReader(bytes), { index: old, from: 1, to: 2 })).lines).toEqual(["a\rb", "c"]);
  });

  it("reads on inside a long CR-terminated line, and tells an offset past its end", async () => {
    const lines = ["short", "y".repeat(5000), "after"];
    const bytes = strToU8(`${lines.join("\r")}\r`);
    const index = indexOf(bytes, { markBytes: 1000 });
    expect(index.lines).toBe(3);
    const r = memoryRangeReader(bytes);
    const cut = await readLines(r, { index, from: 1, to: 3, maxBytes: 1000 });
    expect(cut).toMatchObject({ truncated: true, to: 2 });
    let got = cut.lines[1];
    let at = cut.cutAtByte!;
    for (;;) {
      const on = await readLines(r, { index, from: 2, to: 3, maxBytes: 1000, skipBytes: at });
      got += on.lines[0];
      if (on.cutAtByte === undefined) {
        expect(on.lines.slice(1)).toEqual(["after"]);
        break;
      }
      at = on.cutAtByte;
    }
    expect(got).toBe(lines[1]);
    expect(await readLines(r, { index, from: 2, to: 2, skipBytes: 5001 })).toMatchObject({ offsetPastLine: true });
    expect(await readLines(r, { index, from: 3, to: 3, skipBytes: 5 })).toMatchObject({ lines: [""] });
    expect(await readLines(r, { index, from: 3, to: 3, skipBytes: 6 })).toMatchObject({ offsetPastLine: true });
  });

  it("reaches lines after a huge one through byte checkpoints", async () => {
    const bytes = strToU8(`${"h".repeat(50_000)}\r${Array.from({ length: 20 }, (_, i) => `t${i}`).join("\r")}`);
    const index = indexOf(bytes, { markBytes: 4096, chunk: 1000 });
    expect(index.lines).toBe(21);
    const r = memoryRangeReader(bytes);
    const out = await readLines(r, { index, from: 2, to: 4, maxScanBytes: 8192 });
    expect(out.lines).toEqual(["t0", "t1", "t2"]);
  });
});

describe("CSV with CR line endings", () => {
  const bytes = strToU8(salaries);
  const index = indexOf(bytes, { every: 4 });

  it("finds the header's columns and counts the rows", async () => {
    expect(await delimitedInfo(memoryRangeReader(bytes), index, ",")).toEqual({
      columns: ["name", "salary"],
      rows: 30,
    });
    // Empty lines at the end (an editor's extra line ends) are not rows.
    const extra = strToU8(`${salaries}\r\r`);
    expect(await delimitedInfo(memoryRangeReader(extra), indexOf(extra), ",")).toEqual({
      columns: ["name", "salary"],
      rows: 30,
    });
  });

  it("reads rows by number", async () => {
    const out = await readRows(memoryRangeReader(bytes), { index, delimiter: ",", from: 1, to: 30 });
    expect(out.header).toEqual(["name", "salary"]);
    expect(out.rows).toHaveLength(30);
    expect(out.rows[0]).toEqual(["employee0", "50000"]);
    expect(out.rows[29]).toEqual(["employee29", "79000"]);
    expect(out).toMatchObject({ from: 1, to: 30, totalRows: 30, truncated: false });
  });
});
