// A small PDF whose page content (or object stream, cross-reference streams, a font's CMap)
// inflates past the reader's decode limit, 16 MB, is refused with an error naming the page and the
// limit, and never handed to pdf.js, which would decode all of it with no limit (a Worker has
// 128 MB). Under the limit a page's content is held once: no joined copy of the inflated chunks,
// none of the page's streams; a large decoded object stream is let go before the next one is
// decoded; a long string token is no array of numbers; an operand array keeps at most 65,536 items.
import { deflateSync } from "node:zlib";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { pdfRead } from "../../agent/tools/attachment-tools";
import type { AttachmentAccess } from "../../agent/tools/registry";
import { inspectAttachment } from "../../services/attachments/inspect";
import { decodeStream } from "../../services/attachments/formats/pdf/filters";
import { Lexer } from "../../services/attachments/formats/pdf/lexer";
import { PdfTooLarge } from "../../services/attachments/formats/pdf/objects";
import { openWithPdfjs } from "../../services/attachments/formats/pdf/pdfjs";
import { probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { concatBytes } from "../../services/attachments/formats/shared/bytes";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { buildPdf, concat, helvetica, latin1, stream } from "./pdf-builders";

// pdf.js stands in as a reader that would read anything: any page it is handed shows up as its text.
vi.mock("../../services/attachments/formats/pdf/pdfjs", async (orig) => ({
  ...(await orig<typeof import("../../services/attachments/formats/pdf/pdfjs")>()),
  openWithPdfjs: vi.fn(async () => ({
    pageCount: 2,
    title: null,
    author: null,
    producer: null,
    pageText: async () => "read by pdf.js",
    close: async () => {},
  })),
}));
// Watched, not changed: what the reader joins and what it decodes.
vi.mock("../../services/attachments/formats/shared/bytes", async (orig) => {
  const real = await orig<typeof import("../../services/attachments/formats/shared/bytes")>();
  return { ...real, concatBytes: vi.fn(real.concatBytes) };
});
vi.mock("../../services/attachments/formats/pdf/filters", async (orig) => {
  const real = await orig<typeof import("../../services/attachments/formats/pdf/filters")>();
  return { ...real, decodeStream: vi.fn(real.decodeStream) };
});

const MB = 1024 * 1024;

beforeEach(() => {
  vi.mocked(openWithPdfjs).mockClear();
  vi.mocked(concatBytes).mockClear();
  vi.mocked(decodeStream).mockClear();
});

/** `head`, then spaces up to `size` bytes. */
function padded(head: string, size: number): Uint8Array {
  const bytes = new Uint8Array(size).fill(0x20);
  bytes.set(latin1(head));
  return bytes;
}

const showText = (word: string) => `BT /F1 12 Tf 10 100 Td (${word}) Tj ET\n`;
const pageDict = (contents: string) =>
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 5 0 R >> >> /Contents ${contents} >>`;

/** Page 1 shows "kumquat" in content that inflates to `size` bytes; page 2 shows "quince". */
function bombPdf(size: number): Uint8Array {
  return buildPdf(
    {
      1: "<< /Type /Catalog /Pages 2 0 R >>",
      2: "<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>",
      3: pageDict("4 0 R"),
      4: stream("", padded(showText("kumquat"), size)),
      5: helvetica,
      6: pageDict("7 0 R"),
      7: stream("", showText("quince")),
    },
    { root: 1 },
  );
}

const tooLarge = /^page 1 is too large to read: .*16 MB/;

describe("a page whose content inflates past the limit", () => {
  it.each([17, 49])(
    "to %i MB: pdf_read's error names the page and the 16 MB limit; pdf.js never sees it",
    async (mb) => {
      const pdf = bombPdf(mb * MB);
      expect(pdf.length).toBeLessThan(200 * 1024);
      const err = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 2, maxChars: 60_000 }).catch(
        (e: unknown) => e,
      );
      expect(openWithPdfjs).not.toHaveBeenCalled();
      expect((err as Error).message).toMatch(tooLarge);
      expect(err).toBeInstanceOf(PdfTooLarge);
    },
  );

  it("the pdf_read tool answers that error", async () => {
    const reader = memoryRangeReader(bombPdf(17 * MB));
    const ctx: AttachmentAccess = {
      openAttachment: async () => ({
        attachment: { id: "att_bomb", name: "bomb.pdf", type: "application/pdf", facts: { kind: "pdf" } } as never,
        reader,
        text: async () => {
          throw new Error("not a text file");
        },
      }),
      pageIndex: {
        status: async () => ({ status: "none", indexed: 0, startedAt: null }),
        start: async () => {},
        put: async () => null,
      },
    };
    const out = await pdfRead.run({ attachment_id: "att_01M8XB306NZEEYSE16JBKV2N5X", pages: "1-2" }, ctx);
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(tooLarge);
    expect(openWithPdfjs).not.toHaveBeenCalled();
  });

  it("the search index's chunk takes it as an empty page and reads the next", async () => {
    const chunk = await readPdfPages(memoryRangeReader(bombPdf(17 * MB)), { from: 1, to: 2, skipUnreadable: true });
    expect(chunk.pages).toEqual([
      { page: 1, text: "" },
      { page: 2, text: "quince" },
    ]);
    expect(openWithPdfjs).not.toHaveBeenCalled();
  });
});

/**
 * Objects in object streams, each stream padded with spaces to `size` decoded bytes, behind a
 * cross-reference stream. `streams` lists each stream's objects; `direct` are plain objects.
 */
function objStmPdf(streams: Record<number, string>[], size: number, direct: Record<number, string> = {}): Uint8Array {
  const parts: Uint8Array[] = [latin1("%PDF-1.7\n")];
  let offset = parts[0].length;
  const entries = new Map<number, [number, number, number]>();
  const write = (num: number, body: Uint8Array) => {
    entries.set(num, [1, offset, 0]);
    const chunk = concat([latin1(`${num} 0 obj\n`), body, latin1("\nendobj\n")]);
    parts.push(chunk);
    offset += chunk.length;
  };
  for (const [num, body] of Object.entries(direct)) write(Number(num), latin1(body));
  streams.forEach((objects, k) => {
    const stmNum = 100 + k;
    let header = "";
    let body = "";
    Object.entries(objects).forEach(([num, text], i) => {
      header += `${num} ${body.length} `;
      body += `${text}\n`;
      entries.set(Number(num), [2, stmNum, i]);
    });
    const data = padded(header + body, size);
    write(stmNum, stream(`/Type /ObjStm /N ${Object.keys(objects).length} /First ${header.length}`, data));
  });
  const xrefNum = 200;
  entries.set(xrefNum, [1, offset, 0]);
  const rows: number[] = [];
  for (let n = 0; n <= xrefNum; n++) {
    const [t, f2, f3] = entries.get(n) ?? [0, 0, n === 0 ? 65535 : 0];
    rows.push(t, (f2 >>> 24) & 255, (f2 >>> 16) & 255, (f2 >>> 8) & 255, f2 & 255, (f3 >> 8) & 255, f3 & 255);
  }
  const trailer = `/Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Root 1 0 R /Info 3 0 R`;
  parts.push(concat([latin1(`${xrefNum} 0 obj\n`), stream(trailer, Uint8Array.from(rows)), latin1("\nendobj\n")]));
  parts.push(latin1(`startxref\n${offset}\n%%EOF\n`));
  return concat(parts);
}

const catalog = "<< /Type /Catalog /Pages 2 0 R >>";
const noPages = "<< /Type /Pages /Kids [] /Count 0 >>";
const info = "<< /Title (Kumquats) >>";

describe("an object stream that inflates past the limit", () => {
  it("fails the probe with the limit named, without pdf.js: the upload still gets its note", async () => {
    const pdf = objStmPdf([{ 1: catalog }, { 2: noPages }], 17 * MB, { 3: info });
    const err = await probePdf(memoryRangeReader(pdf)).catch((e: unknown) => e);
    expect(openWithPdfjs).not.toHaveBeenCalled();
    expect((err as Error).message).toMatch(/object stream 100 .*16 MB/);
    expect(err).toBeInstanceOf(PdfTooLarge);
    const { facts } = await inspectAttachment(memoryRangeReader(pdf), {
      name: "streams.pdf",
      declaredType: "application/pdf",
      text: async () => {
        throw new Error("not a text file");
      },
    });
    expect(facts).toMatchObject({ kind: "pdf", problem: expect.stringMatching(/16 MB/) });
  });
});

describe("what a read holds", () => {
  /** Decodes that produced a large output, in order. */
  const largeDecodes = async () => {
    const sizes: number[] = [];
    for (const r of vi.mocked(decodeStream).mock.results) {
      const out = r.type === "return" ? await r.value : null;
      if (out && out.length >= MB) sizes.push(out.length);
    }
    return sizes;
  };
  const largeJoins = () =>
    vi.mocked(concatBytes).mock.results.filter((r) => r.type === "return" && r.value.length >= MB).length;

  it("a page of one 6 MB content stream: no joined copy of it", async () => {
    const read = await readPdfPages(memoryRangeReader(bombPdf(6 * MB)), { from: 1, to: 1 });
    expect(read.pages[0].text).toBe("kumquat");
    expect(await largeDecodes()).toEqual([6 * MB]);
    expect(largeJoins()).toBe(0);
  });

  it("a page of two 3 MB content streams: read one after the other, not joined", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: pageDict("[4 0 R 6 0 R]"),
        4: stream("", padded(showText("kumquat"), 3 * MB)),
        5: helvetica,
        6: stream("", padded("BT /F1 12 Tf 10 80 Td (quince) Tj ET\n", 3 * MB)),
      },
      { root: 1 },
    );
    const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 });
    expect(read.pages[0].text).toBe("kumquat\nquince");
    expect(largeJoins()).toBe(0);
  });

  it("content streams split inside an operand array still read as one", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: pageDict("[4 0 R 6 0 R]"),
        4: stream("", "BT /F1 12 Tf 10 100 Td [(kum) -10"),
        5: helvetica,
        6: stream("", "(quat)] TJ ET"),
      },
      { root: 1 },
    );
    const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 });
    expect(read.pages[0].text).toBe("kumquat");
  });

  it("a decoded object stream of 10 MB is let go before the next is decoded", async () => {
    // The catalog and /Info in the first stream, the page tree in the second: the probe reads the
    // catalog, then the page tree, then /Info, which has to decode the first stream again.
    const pdf = objStmPdf([{ 1: catalog, 3: info }, { 2: noPages }], 10 * MB);
    const probed = await probePdf(memoryRangeReader(pdf));
    expect(probed).toMatchObject({ pageCount: 0, title: "Kumquats" });
    expect(await largeDecodes()).toEqual([10 * MB, 10 * MB, 10 * MB]);
  });
});

describe("cross-reference streams past the limit together", () => {
  /**
   * Two cross-reference stream sections (the newest with /Prev to the older), each `rows` rows of
   * /W [1 4 2] (7 bytes a row), free entries past the file's four objects.
   */
  function xrefChainPdf(rows: number): Uint8Array {
    const parts: Uint8Array[] = [latin1("%PDF-1.7\n")];
    let offset = parts[0].length;
    const at: number[] = [];
    const write = (num: number, body: Uint8Array) => {
      at[num] = offset;
      const chunk = concat([latin1(`${num} 0 obj\n`), body, latin1("\nendobj\n")]);
      parts.push(chunk);
      offset += chunk.length;
    };
    write(1, latin1(catalog));
    write(2, latin1(noPages));
    const section = (num: number, prev: string) => {
      const data = new Uint8Array(rows * 7);
      for (let n = 1; n <= num; n++) {
        const o = n === num ? offset : at[n];
        data.set([1, (o >>> 24) & 255, (o >>> 16) & 255, (o >>> 8) & 255, o & 255, 0, 0], n * 7);
      }
      const body = new Uint8Array(deflateSync(data));
      const dict = `<< /Type /XRef /Size ${rows} /W [1 4 2] /Root 1 0 R ${prev} /Filter /FlateDecode /Length ${body.length} >>`;
      write(num, concat([latin1(`${dict}\nstream\n`), body, latin1("\nendstream")]));
    };
    section(3, "");
    const older = at[3];
    section(4, `/Prev ${older}`);
    parts.push(latin1(`startxref\n${at[4]}\n%%EOF\n`));
    return concat(parts);
  }

  it("two sections of 9 MB: the file is refused with the limit named, without pdf.js", async () => {
    const pdf = xrefChainPdf(Math.floor((9 * MB) / 7));
    // One section alone is within the limit.
    expect(await probePdf(memoryRangeReader(xrefChainPdf(Math.floor((3 * MB) / 7))))).toMatchObject({ pageCount: 0 });
    const err = await probePdf(memoryRangeReader(pdf)).catch((e: unknown) => e);
    expect(openWithPdfjs).not.toHaveBeenCalled();
    expect((err as Error).message).toMatch(/cross-reference streams decode to more than 16 MB/);
    expect(err).toBeInstanceOf(PdfTooLarge);
  });
});

describe("a font's /ToUnicode CMap past its 8 MB limit", () => {
  it("refuses the page, naming the limit, rather than leaving its glyphs to pdf.js", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: pageDict("4 0 R"),
        4: stream("", "BT /F1 12 Tf 10 100 Td <0041> Tj ET"),
        5: "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>",
        6: "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /X /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>",
        7: stream("", padded("1 begincodespacerange <0000> <FFFF> endcodespacerange\n", 9 * MB)),
      },
      { root: 1 },
    );
    const err = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 }).catch((e: unknown) => e);
    expect(openWithPdfjs).not.toHaveBeenCalled();
    expect((err as Error).message).toMatch(/^page 1 is too large to read: a font's \/ToUnicode CMap .*8 MB/);
    expect(err).toBeInstanceOf(PdfTooLarge);
  });
});

describe("what one operator's operands hold", () => {
  it("a 1 MB string token is read into bytes directly, not through an array of numbers", () => {
    const from = vi.spyOn(Uint8Array, "from");
    const literal = new Lexer(latin1(`(${"a".repeat(MB)})`)).next();
    const hex = new Lexer(latin1(`<${"61".repeat(MB)}>`)).next();
    expect(literal.t === "str" && literal.v.length).toBe(MB);
    expect(hex.t === "str" && hex.v.length).toBe(MB);
    expect(from).not.toHaveBeenCalled();
    from.mockRestore();
  });

  it("a TJ array of 70,000 strings keeps its first 65,536", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: pageDict("4 0 R"),
        4: stream("", `BT /F1 1 Tf 10 100 Td [${"(a)".repeat(70_000)}] TJ ET`),
        5: helvetica,
      },
      { root: 1 },
    );
    const read = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 });
    expect(read.pages[0].text.replace(/[^a]/g, "").length).toBe(65_536);
  });
});
