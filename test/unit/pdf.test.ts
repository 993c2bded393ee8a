import { deflateSync } from "node:zlib";
import { PDFDocument, StandardFonts, type PDFObject } from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { NEEDS_PASSWORD, PdfError, probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";

// ---------------------------------------------------------------------------------------------
// Fixtures

const PAGES = 3000;

async function kumquatPdf(pages: number, useObjectStreams: boolean): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    doc.addPage([200, 200]).drawText(`page ${i} kumquat${i}`, { x: 10, y: 100, size: 12, font });
  }
  return doc.save({ useObjectStreams });
}

const latin1 = (s: string) => new Uint8Array(Buffer.from(s, "latin1"));
const text = (b: Uint8Array) => Buffer.from(b).toString("latin1");

function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

function startxrefOf(bytes: Uint8Array): number {
  const m = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(text(bytes.subarray(bytes.length - 64)));
  if (!m) throw new Error("fixture has no startxref");
  return Number(m[1]);
}

/** Serialises one pdf-lib object to bytes. */
function objBytes(o: PDFObject): Uint8Array {
  const buf = new Uint8Array(o.sizeInBytes());
  o.copyBytesInto(buf, 0);
  return buf;
}

/**
 * An incremental update (§7.5.6) of `base`: `edit` changes the loaded document, and the objects
 * that differ afterwards are appended with a classic xref section whose trailer has /Prev.
 */
async function incrementalUpdate(base: Uint8Array, edit: (doc: PDFDocument) => Promise<void>, trailerExtra = ""): Promise<Uint8Array> {
  const before = await PDFDocument.load(base, { updateMetadata: false });
  const old = new Map(before.context.enumerateIndirectObjects().map(([ref, o]) => [ref.objectNumber, text(objBytes(o))]));
  const doc = await PDFDocument.load(base, { updateMetadata: false });
  await edit(doc);
  doc.setModificationDate(new Date(Date.UTC(2025, 0, 1)));
  const changed = doc.context
    .enumerateIndirectObjects()
    .filter(([ref, o]) => old.get(ref.objectNumber) !== text(objBytes(o)))
    .sort(([a], [b]) => a.objectNumber - b.objectNumber);
  const parts: Uint8Array[] = [base, latin1("\n")];
  let offset = base.length + 1;
  const entries: [number, number][] = [];
  for (const [ref, o] of changed) {
    entries.push([ref.objectNumber, offset]);
    const chunk = concat([latin1(`${ref.objectNumber} 0 obj\n`), objBytes(o), latin1("\nendobj\n")]);
    parts.push(chunk);
    offset += chunk.length;
  }
  let xref = "xref\n";
  for (const [num, off] of entries) xref += `${num} 1\n${String(off).padStart(10, "0")} 00000 n \n`;
  const root = String(doc.context.trailerInfo.Root);
  const info = doc.context.trailerInfo.Info?.toString();
  xref += `trailer\n<< /Size ${doc.context.largestObjectNumber + 1} /Root ${root} ${info ? `/Info ${info}` : ""} /Prev ${startxrefOf(base)} ${trailerExtra} >>\nstartxref\n${offset}\n%%EOF\n`;
  parts.push(latin1(xref));
  return concat(parts);
}

type Body = string | Uint8Array;

/** `<< dict /Length n >> stream ... endstream`, Flate-compressed unless `filter` says otherwise. */
function stream(dict: string, data: Body, filter: string | null = "/FlateDecode"): Uint8Array {
  const raw = typeof data === "string" ? latin1(data) : data;
  const body = filter === "/FlateDecode" ? new Uint8Array(deflateSync(raw)) : raw;
  return concat([latin1(`<< ${dict} ${filter ? `/Filter ${filter}` : ""} /Length ${body.length} >>\nstream\n`), body, latin1("\nendstream")]);
}

/** PNG-predicts rows (filter types cycling 0-4) as /Predictor 12+ writers do. */
function pngPredict(data: Uint8Array, columns: number): Uint8Array {
  const rows = data.length / columns;
  const out: number[] = [];
  for (let r = 0; r < rows; r++) {
    const type = r % 5;
    out.push(type);
    for (let i = 0; i < columns; i++) {
      const x = data[r * columns + i];
      const a = i > 0 ? data[r * columns + i - 1] : 0;
      const b = r > 0 ? data[(r - 1) * columns + i] : 0;
      const c = r > 0 && i > 0 ? data[(r - 1) * columns + i - 1] : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const pred = [0, a, b, (a + b) >> 1, paeth][type];
      out.push((x - pred) & 0xff);
    }
  }
  return Uint8Array.from(out);
}

/**
 * A hand-built PDF: objects by number, an optional object stream holding some of them, and a
 * classic table or a cross-reference stream (W [1 4 2], optional PNG predictor, /Index runs).
 */
function buildPdf(
  objects: Record<number, Body>,
  opts: { root: number; info?: number; xref?: "table" | "stream"; predictor?: boolean; objStm?: number[]; trailerExtra?: string },
): Uint8Array {
  const parts: Uint8Array[] = [latin1("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")];
  let offset = parts[0].length;
  const entries = new Map<number, [1, number] | [2, number, number]>();
  const nums = Object.keys(objects).map(Number).sort((a, b) => a - b);
  let next = Math.max(...nums) + 1;
  const write = (num: number, body: Body) => {
    entries.set(num, [1, offset]);
    const chunk = concat([latin1(`${num} 0 obj\n`), typeof body === "string" ? latin1(body) : body, latin1("\nendobj\n")]);
    parts.push(chunk);
    offset += chunk.length;
  };
  const inStm = new Set(opts.objStm ?? []);
  for (const n of nums) if (!inStm.has(n)) write(n, objects[n]);
  if (inStm.size) {
    const stmNum = next++;
    let header = "";
    let body = "";
    [...inStm].forEach((n, i) => {
      header += `${n} ${body.length} `;
      body += `${text(typeof objects[n] === "string" ? latin1(objects[n] as string) : (objects[n] as Uint8Array))}\n`;
      entries.set(n, [2, stmNum, i]);
    });
    write(stmNum, stream(`/Type /ObjStm /N ${inStm.size} /First ${header.length}`, header + body));
  }
  const trailerCommon = `/Root ${opts.root} 0 R ${opts.info ? `/Info ${opts.info} 0 R` : ""} ${opts.trailerExtra ?? ""}`;
  if (opts.xref === "stream") {
    const xrefNum = next++;
    entries.set(xrefNum, [1, offset]);
    const all = [0, ...[...entries.keys()].sort((a, b) => a - b)];
    const runs: [number, number][] = [];
    for (const n of all) {
      const last = runs[runs.length - 1];
      if (last && last[0] + last[1] === n) last[1]++;
      else runs.push([n, 1]);
    }
    const rows: number[] = [];
    for (const [start, count] of runs) {
      for (let n = start; n < start + count; n++) {
        const e = entries.get(n);
        const [t, f2, f3] = e ? [e[0], e[1], e[0] === 2 ? e[2] : 0] : [0, 0, 65535];
        rows.push(t, (f2 >>> 24) & 255, (f2 >>> 16) & 255, (f2 >>> 8) & 255, f2 & 255, (f3 >> 8) & 255, f3 & 255);
      }
    }
    const data = opts.predictor ? pngPredict(Uint8Array.from(rows), 7) : Uint8Array.from(rows);
    const parms = opts.predictor ? "/DecodeParms << /Predictor 12 /Columns 7 >>" : "";
    const dict = `/Type /XRef /Size ${next} /W [1 4 2] /Index [${runs.flat().join(" ")}] ${parms} ${trailerCommon}`;
    parts.push(concat([latin1(`${xrefNum} 0 obj\n`), stream(dict, data), latin1("\nendobj\n")]));
  } else {
    // Subsections are runs of consecutive numbers, as writers produce them.
    let xref = "xref\n";
    const sorted = [0, ...[...entries.keys()].sort((a, b) => a - b)];
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
      xref += `${sorted[i]} ${j - i + 1}\n`;
      for (let k = i; k <= j; k++) xref += sorted[k] === 0 ? "0000000000 65535 f \n" : `${String(entries.get(sorted[k])![1]).padStart(10, "0")} 00000 n \n`;
      i = j + 1;
    }
    parts.push(latin1(`${xref}trailer\n<< /Size ${next} ${trailerCommon} >>\n`));
  }
  parts.push(latin1(`startxref\n${offset}\n%%EOF\n`));
  return concat(parts);
}

/** Appends an update section (new or replaced objects, classic xref) with a /Prev trailer. */
function appendUpdate(base: Uint8Array, objects: Record<number, Body>, trailer: string): Uint8Array {
  const parts: Uint8Array[] = [base];
  let offset = base.length;
  let xref = "xref\n";
  for (const [num, body] of Object.entries(objects)) {
    const chunk = concat([latin1(`${num} 0 obj\n`), typeof body === "string" ? latin1(body) : body, latin1("\nendobj\n")]);
    xref += `${num} 1\n${String(offset).padStart(10, "0")} 00000 n \n`;
    parts.push(chunk);
    offset += chunk.length;
  }
  parts.push(latin1(`${xref}trailer\n<< ${trailer} /Prev ${startxrefOf(base)} >>\nstartxref\n${offset}\n%%EOF\n`));
  return concat(parts);
}

const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

async function pdfError(p: Promise<unknown>): Promise<PdfError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PdfError);
  return err as PdfError;
}

/** Deterministic PRNG for fuzzing. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
}

// ---------------------------------------------------------------------------------------------

describe("a 3,000-page PDF read through ranged reads", () => {
  let objStreams: Uint8Array;
  let classic: Uint8Array;
  beforeAll(async () => {
    [objStreams, classic] = await Promise.all([kumquatPdf(PAGES, true), kumquatPdf(PAGES, false)]);
  }, 60_000);

  for (const variant of ["object streams + xref stream", "classic xref table"] as const) {
    describe(variant, () => {
      const bytes = () => (variant === "classic xref table" ? classic : objStreams);

      it("the fixture really uses that cross-reference form", () => {
        const tail = text(bytes().subarray(startxrefOf(bytes()), startxrefOf(bytes()) + 200));
        if (variant === "classic xref table") expect(tail.startsWith("xref")).toBe(true);
        else expect(tail).toContain("/Type /XRef");
      });

      it("probePdf reports 3000 pages from a small fraction of the file", async () => {
        const r = memoryRangeReader(bytes());
        const info = await probePdf(r);
        expect(info.pageCount).toBe(PAGES);
        expect(info.version).toBe("1.7");
        expect(info.encrypted).toBe(false);
        expect(info.bytesRead).toBe(r.bytesRead);
        expect(info.bytesRead).toBeLessThan(0.05 * r.size);
        expect(info.bytesRead).toBeLessThan(300 * 1024);
      });

      it("readPdfPages(1500, 1501) returns exactly those pages, reading < 5% of the file", async () => {
        const r = memoryRangeReader(bytes());
        const out = await readPdfPages(r, 1500, 1501);
        expect(out.pages).toEqual([
          { page: 1500, text: "page 1500 kumquat1500" },
          { page: 1501, text: "page 1501 kumquat1501" },
        ]);
        expect(out.pages.map((p) => p.text).join("\n")).not.toContain("kumquat1502");
        expect(out.truncated).toBe(false);
        expect(out.bytesRead).toBe(r.bytesRead);
        expect(out.bytesRead).toBeLessThan(0.05 * r.size);
        expect(out.bytesRead).toBeLessThan(300 * 1024);
      });

      it("reads the first and the last page", async () => {
        expect((await readPdfPages(memoryRangeReader(bytes()), 1, 1)).pages).toEqual([{ page: 1, text: "page 1 kumquat1" }]);
        expect((await readPdfPages(memoryRangeReader(bytes()), 2999, 3000)).pages.map((p) => p.text)).toEqual(["page 2999 kumquat2999", "page 3000 kumquat3000"]);
      });

      it("a page past the end is a PdfError naming the page and the count", async () => {
        const err = await pdfError(readPdfPages(memoryRangeReader(bytes()), 3001, 3001));
        expect(err.message).toBe("page 3001 is past the end: the document has 3000 pages");
        const err2 = await pdfError(readPdfPages(memoryRangeReader(bytes()), 2999, 3002));
        expect(err2.message).toBe("page 3002 is past the end: the document has 3000 pages");
      });

      it("maxChars stops early and says so", async () => {
        const out = await readPdfPages(memoryRangeReader(bytes()), 10, 20, { maxChars: 30 });
        expect(out.pages.map((p) => p.text)).toEqual(["page 10 kumquat10", "page 11 kumqu"]);
        expect(out.truncated).toBe(true);
      });

      it("a file cut in half goes to pdf.js, which recovers what it can by scanning, or fails as a PdfError", async () => {
        const t0 = Date.now();
        const half = bytes().slice(0, Math.floor(bytes().length / 2));
        const r = memoryRangeReader(half);
        const info = await probePdf(r).catch((err: unknown) => err);
        if (info instanceof Error) expect(info).toBeInstanceOf(PdfError);
        else expect(info).toMatchObject({ pageCountSource: "pdfjs" });
        // Recovery reads the file (bounded by PDFJS_MAX_BYTES), each chunk once.
        expect(r.bytesRead).toBeLessThan(half.length + 128 * 1024);
        expect(Date.now() - t0).toBeLessThan(10_000);
      });
    });
  }
});

describe("incremental updates", () => {
  it("page count and pages come from the newest cross-reference section", async () => {
    const base = await kumquatPdf(3, false);
    const updated = await incrementalUpdate(base, async (doc) => {
      const font = await doc.embedFont(StandardFonts.Helvetica);
      doc.addPage([200, 200]).drawText("page 4 appended later", { x: 10, y: 100, size: 12, font });
    });
    expect(text(updated.subarray(0, base.length))).toBe(text(base)); // really appended
    expect(text(updated.subarray(base.length))).toMatch(/\/Prev \d+/);
    expect((await probePdf(memoryRangeReader(base))).pageCount).toBe(3);
    expect((await probePdf(memoryRangeReader(updated))).pageCount).toBe(4);
    const out = await readPdfPages(memoryRangeReader(updated), 3, 4);
    expect(out.pages.map((p) => p.text)).toEqual(["page 3 kumquat3", "page 4 appended later"]);
  });

  it("works over a cross-reference stream base (hybrid chain) and across two updates", async () => {
    const base = await kumquatPdf(2, true);
    const once = await incrementalUpdate(base, async (doc) => {
      doc.setTitle("First revision");
      const font = await doc.embedFont(StandardFonts.Helvetica);
      doc.addPage([200, 200]).drawText("third", { x: 10, y: 100, size: 12, font });
    });
    const twice = await incrementalUpdate(once, async (doc) => {
      doc.setTitle("Second revision");
      doc.removePage(0);
    });
    expect((await probePdf(memoryRangeReader(once))).title).toBe("First revision");
    const info = await probePdf(memoryRangeReader(twice));
    expect(info.pageCount).toBe(2);
    expect(info.title).toBe("Second revision");
    const out = await readPdfPages(memoryRangeReader(twice), 1, 2);
    expect(out.pages.map((p) => p.text)).toEqual(["page 2 kumquat2", "third"]);
  });

  it("the newest trailer's /Root and /Info win over older trailers", async () => {
    for (const xref of ["table", "stream"] as const) {
      const base = buildPdf(
        {
          1: "<< /Type /Catalog /Pages 2 0 R >>",
          2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
          3: "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
          4: stream("", "BT /F1 12 Tf (original page) Tj ET"),
          5: helvetica,
          6: "<< /Title (Old title) /Author (Kept author) >>",
        },
        { root: 1, info: 6, xref },
      );
      const updated = appendUpdate(
        base,
        {
          20: "<< /Type /Catalog /Pages 21 0 R >>",
          21: "<< /Type /Pages /Kids [3 0 R 22 0 R] /Count 2 >>",
          22: "<< /Type /Page /Parent 21 0 R /Contents 23 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
          23: stream("", "BT /F1 12 Tf (added page) Tj ET"),
          24: "<< /Title (New title) >>",
        },
        "/Size 25 /Root 20 0 R /Info 24 0 R",
      );
      expect(await probePdf(memoryRangeReader(base))).toMatchObject({ pageCount: 1, title: "Old title", author: "Kept author" });
      expect(await probePdf(memoryRangeReader(updated))).toMatchObject({ pageCount: 2, title: "New title", author: null });
      expect((await readPdfPages(memoryRangeReader(updated), 1, 2)).pages.map((p) => p.text)).toEqual(["original page", "added page"]);
    }
  });

  it("a /Prev loop ends instead of hanging", async () => {
    const base = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        4: stream("", "BT /F1 12 Tf (looped) Tj ET"),
        5: helvetica,
      },
      { root: 1 },
    );
    // startxref points at "xref", before the trailer, so adding /Prev there leaves it valid.
    const looped = latin1(text(base).replace("/Root 1 0 R", `/Root 1 0 R /Prev ${startxrefOf(base)}`));
    expect(text(looped)).toContain(`/Prev ${startxrefOf(looped)}`);
    expect((await probePdf(memoryRangeReader(looped))).pageCount).toBe(1);
    expect((await readPdfPages(memoryRangeReader(looped), 1, 1)).pages[0].text).toBe("looped");
  });
});

describe("document information", () => {
  it("title, author and producer from setTitle/setAuthor/setProducer, including non-ASCII", async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    doc.setTitle("Quarterly Kumquats — Ünïcode ✓");
    doc.setAuthor("Ada Lovelace");
    doc.setProducer("context-chat tests");
    for (const useObjectStreams of [true, false]) {
      const info = await probePdf(memoryRangeReader(await doc.save({ useObjectStreams })));
      expect(info).toMatchObject({ pageCount: 1, title: "Quarterly Kumquats — Ünïcode ✓", author: "Ada Lovelace", producer: "context-chat tests", encrypted: false });
    }
  });

  it("absent fields are null; pdf-lib's default producer is reported", async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    const info = await probePdf(memoryRangeReader(await doc.save()));
    expect(info.title).toBeNull();
    expect(info.author).toBeNull();
    expect(info.producer).toMatch(/pdf-lib/);
  });

  it("literal and PDFDocEncoding strings decode", async () => {
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R /Version /2.0 >>",
        2: "<< /Type /Pages /Kids [] /Count 0 >>",
        3: "<< /Title (Caf\\351 \\(draft\\)) /Author (Line\\\none) /Producer <FEFF00480069> >>",
      },
      { root: 1, info: 3 },
    );
    const info = await probePdf(memoryRangeReader(pdf));
    expect(info).toMatchObject({ pageCount: 0, version: "2.0", title: "Café (draft)", author: "Lineone", producer: "Hi" });
  });
});

describe("hand-built structures", () => {
  const pageObjects = (content: Body, resources = `<< /Font << /F1 5 0 R >> >>`): Record<number, Body> => ({
    1: "<< /Type /Catalog /Pages 2 0 R >>",
    2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    3: `<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources ${resources} >>`,
    4: typeof content === "string" ? stream("", content) : content,
    5: helvetica,
  });

  it("a cross-reference stream with a PNG predictor, /Index runs and an object stream", async () => {
    const objects = pageObjects("BT /F1 12 Tf (predicted) Tj ET");
    objects[40] = "<< /Title (Gap in the numbers) >>"; // a second /Index run
    const pdf = buildPdf(objects, { root: 1, info: 40, xref: "stream", predictor: true, objStm: [1, 2, 3, 40] });
    expect(text(pdf)).toContain("/Predictor 12");
    expect(text(pdf)).toMatch(/\/Index \[0 \d+ 40 \d+\]/);
    const info = await probePdf(memoryRangeReader(pdf));
    expect(info).toMatchObject({ pageCount: 1, title: "Gap in the numbers" });
    expect((await readPdfPages(memoryRangeReader(pdf), 1, 1)).pages[0].text).toBe("predicted");
  });

  it("a hybrid file: the classic table's /XRefStm names the stream holding compressed objects", async () => {
    const objects = pageObjects("BT /F1 12 Tf (hybrid) Tj ET");
    const streamOnly = buildPdf(objects, { root: 1, xref: "stream", objStm: [1, 2, 3] });
    const stm = startxrefOf(streamOnly);
    const body = streamOnly.subarray(0, streamOnly.lastIndexOf(0x73 /* s of startxref */, streamOnly.length - 10));
    const table = `xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 9 /Root 1 0 R /XRefStm ${stm} >>\nstartxref\n${body.length}\n%%EOF\n`;
    const hybrid = concat([body, latin1(table)]);
    expect(text(hybrid)).not.toMatch(/\/Prev/);
    expect((await probePdf(memoryRangeReader(hybrid))).pageCount).toBe(1);
    expect((await readPdfPages(memoryRangeReader(hybrid), 1, 1)).pages[0].text).toBe("hybrid");
  });

  it("text operators: Tj, TJ spacing, ' and \", T*, Td, Tm, escapes and hex strings; lines and spaces from positions", async () => {
    const content = [
      "BT /F1 12 Tf 1 0 0 1 72 700 Tm",
      "(Hello\\051 \\(world\\) \\101\\102) Tj T*",
      "[(Kum) 20 (quat) -300 (tree)] TJ",
      "0 -14 Td <48657820737472696E67> Tj",
      "72 0 Td (same line) Tj",
      "(quoted) '",
      '1 2 (double quoted) "',
      "1 0 0 1 72 600 Tm (moved by Tm) Tj",
      "ET BT /F1 12 Tf 72 500 Td (second block) Tj ET",
      "BT /F1 12 Tf 72 480 Td (caf\\351 \\200) Tj ET",
      "BT /F1 12 Tf 200 480 Td (same baseline, next block) Tj ET",
      "BT /F1 1 Tf 0 Tc 0 Tw 12 0 0 12 72 300 Tm (E = mc) Tj 12 0 0 12 110 304 Tm (2 superscript) Tj ET",
    ].join("\n");
    const out = await readPdfPages(memoryRangeReader(buildPdf(pageObjects(content), { root: 1 })), 1, 1);
    expect(out.pages[0].text).toBe(
      [
        "Hello) (world) AB",
        "Kumquat tree",
        "Hex string same line",
        "quoted",
        "double quoted",
        "moved by Tm",
        "second block",
        "café € same baseline, next block",
        "E = mc2 superscript",
      ].join("\n"),
    );
  });

  it("Type0 / Identity-H fonts map through /ToUnicode (bfchar and both bfrange forms)", async () => {
    const cmap = [
      "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
      "/CMapName /Test def 1 begincodespacerange <0000> <FFFF> endcodespacerange",
      "2 beginbfchar <0001> <0048> <0002> <00690021> endbfchar",
      "2 beginbfrange <0010> <0019> <0030> <0020> <0022> [<4E2D> <6587> <D83DDE00>] endbfrange",
      "endcmap CMapName currentdict /CMap defineresource pop end end",
    ].join("\n");
    const objects = pageObjects("BT /F1 12 Tf <0001000200100019> Tj [<0020> -500 <00210022>] TJ ET");
    objects[5] = "<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>";
    objects[6] = "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>";
    objects[7] = stream("", cmap);
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), 1, 1);
    expect(out.pages[0].text).toBe("Hi!09中 文😀");
  });

  it("simple fonts: /Differences glyph names over a base encoding, and ToUnicode overriding it", async () => {
    const objects = pageObjects("BT /F1 12 Tf (ABC) Tj /F2 12 Tf (ABC) Tj ET", "<< /Font << /F1 5 0 R /F2 6 0 R >> >>");
    objects[5] = "<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [65 /Euro /uni263A] >> >>";
    objects[6] = "<< /Type /Font /Subtype /TrueType /BaseFont /Y /ToUnicode 7 0 R >>";
    objects[7] = stream("", "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <42> <0078> endbfchar");
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), 1, 1);
    expect(out.pages[0].text).toBe("€☺CAxC");
  });

  it("multiple content streams, form XObjects followed, image data never read", async () => {
    const image = new Uint8Array(400_000).map((_, i) => (i * 7919) & 255);
    const objects = pageObjects("", "<< /Font << /F1 5 0 R >> /XObject << /Fm 8 0 R /Im 9 0 R >> >>");
    objects[3] = "<< /Type /Page /Parent 2 0 R /Contents [4 0 R 6 0 R] /Resources << /Font << /F1 5 0 R >> /XObject << /Fm 8 0 R /Im 9 0 R >> >> >>";
    objects[4] = stream("", "BT /F1 12 Tf (first stream) Tj ET /Im Do");
    objects[6] = stream("", "/Fm Do BI /W 4 /H 4 /BPC 8 /CS /G ID \x00\xffEI\x01 (noise) Tj\x02 EI BT /F1 12 Tf (after the inline image) Tj ET");
    objects[8] = stream("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /Font << /F7 5 0 R >> >>", "BT /F7 12 Tf (inside a form) Tj ET");
    objects[9] = stream("/Type /XObject /Subtype /Image /Width 400 /Height 1000 /ColorSpace /DeviceGray /BitsPerComponent 8", image, "/DCTDecode");
    const pdf = buildPdf(objects, { root: 1 });
    const r = memoryRangeReader(pdf);
    const out = await readPdfPages(r, 1, 1);
    expect(out.pages[0].text).toBe("first stream\ninside a form\nafter the inline image");
    expect(r.bytesRead).toBeLessThan(64 * 1024);
  });

  it("a page tree with nested /Pages nodes: /Count skips subtrees and /Resources are inherited", async () => {
    // 1,000 pages, ten kids a node, three levels of /Pages under the root; the font sits on the root only.
    const objects: Record<number, Body> = { 1: "<< /Type /Catalog /Pages 2 0 R >>", 5: helvetica };
    let next = 10;
    const build = (parent: number, level: number, first: number): [number, number] => {
      const num = next++;
      if (level === 4) {
        const content = next++;
        objects[content] = stream("", `BT /F1 9 Tf (leaf ${first} persimmon${first}) Tj ET`);
        objects[num] = `<< /Type /Page /Parent ${parent} 0 R /Contents ${content} 0 R >>`;
        return [num, 1];
      }
      const kids: number[] = [];
      let count = 0;
      for (let i = 0; i < 10; i++) {
        const [kid, c] = build(num, level + 1, first + count);
        kids.push(kid);
        count += c;
      }
      objects[num] = `<< /Type /Pages /Parent ${parent} 0 R /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${count} >>`;
      return [num, count];
    };
    const [top, total] = build(2, 1, 1);
    objects[2] = `<< /Type /Pages /Kids [${top} 0 R] /Count ${total} /Resources << /Font << /F1 5 0 R >> >> >>`;
    for (const xref of ["table", "stream"] as const) {
      const pdf = buildPdf(objects, { root: 1, xref });
      expect((await probePdf(memoryRangeReader(pdf))).pageCount).toBe(1000);
      const r = memoryRangeReader(pdf);
      const out = await readPdfPages(r, 777, 778);
      expect(out.pages.map((p) => p.text)).toEqual(["leaf 777 persimmon777", "leaf 778 persimmon778"]);
      expect(r.bytesRead).toBeLessThan(0.15 * pdf.length);
    }
  });

  it("an /Encrypt entry: probePdf says encrypted (count still read), readPdfPages refuses", async () => {
    const base = await kumquatPdf(2, false);
    const encrypted = await incrementalUpdate(base, async () => {}, "/Encrypt << /Filter /Standard /V 2 /R 3 /O <00> /U <00> /P -4 >>");
    const info = await probePdf(memoryRangeReader(encrypted));
    expect(info).toMatchObject({ encrypted: true, pageCount: 2, title: null });
    // Its /O and /U hold no real password check: pdf.js finds the empty password wrong.
    expect(info.passwordRequired).toBe(true);
    expect((await pdfError(readPdfPages(memoryRangeReader(encrypted), 1, 1))).message).toBe(NEEDS_PASSWORD);
  });

  it("an encrypted file whose structure sits in object streams reports encrypted with pageCount 0", async () => {
    const pdf = buildPdf(pageObjects("BT /F1 12 Tf (secret) Tj ET"), {
      root: 1,
      xref: "stream",
      objStm: [1, 2, 3],
      trailerExtra: "/Encrypt << /Filter /Standard /V 2 /R 3 /O <00> /U <00> /P -4 >>",
    });
    expect(await probePdf(memoryRangeReader(pdf))).toMatchObject({ encrypted: true, pageCount: 0 });
  });

  it("a content filter the own reader lacks hands the page to pdf.js (no text in an image filter)", async () => {
    const objects = pageObjects(stream("", "BT ET", "/JBIG2Decode"));
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), 1, 1);
    expect(out.pages).toEqual([{ page: 1, text: "" }]);
  });

  it("ASCIIHex and ASCII85 content filters decode (chained with Flate)", async () => {
    const hex = Buffer.from(deflateSync(latin1("BT /F1 12 Tf (hex and flate) Tj ET"))).toString("hex") + ">";
    const objects = pageObjects(stream("", hex, "[/ASCIIHexDecode /FlateDecode]"));
    objects[6] = stream("", "<~6<#'\\7PQ#?1*BP.+=LZ>@qfX:2'@*]Ebf_F+B3(u78s~>", "/ASCII85Decode");
    objects[3] = "<< /Type /Page /Parent 2 0 R /Contents [4 0 R 6 0 R] /Resources << /Font << /F1 5 0 R >> >> >>";
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), 1, 1);
    // Both streams start their text at the origin, on one baseline: one line.
    expect(out.pages[0].text).toBe("hex and flate ascii85 works");
  });
});

describe("bad input is a PdfError, quickly and with bounded reads", () => {
  const quick = async (bytes: Uint8Array, pattern: RegExp) => {
    const t0 = Date.now();
    const r = memoryRangeReader(bytes);
    expect((await pdfError(probePdf(r))).message).toMatch(pattern);
    expect((await pdfError(readPdfPages(memoryRangeReader(bytes), 1, 1))).message).toMatch(pattern);
    expect(Date.now() - t0).toBeLessThan(1000);
    return r;
  };

  it("%PDF-1.7 garbage: no startxref", async () => {
    await quick(latin1("%PDF-1.7 garbage"), /no startxref at the end of the file/);
  });

  it("random bytes: not a PDF", async () => {
    const rand = prng(7);
    const r = await quick(new Uint8Array(1 << 20).map(() => Math.floor(rand() * 256)), /^not a PDF/);
    expect(r.bytesRead).toBeLessThanOrEqual(1024);
  });

  it("an empty file: not a PDF", async () => {
    await quick(new Uint8Array(0), /^not a PDF/);
  });

  it("startxref pointing at garbage: broken cross-reference data", async () => {
    await quick(latin1("%PDF-1.4\nhello there general kenobi\nstartxref\n12\n%%EOF\n"), /broken cross-reference/);
  });

  it("startxref past the end: garbled", async () => {
    await quick(latin1("%PDF-1.4\n1 0 obj << >> endobj\nstartxref\n99999\n%%EOF\n"), /garbled startxref/);
  });

  it("a classic table that ends before its trailer, and a bad entry", async () => {
    const good = buildPdf({ 1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [] /Count 0 >>" }, { root: 1 });
    // The own reader refuses both; pdf.js rebuilds the xref of the second by scanning and says so,
    // while the first has no trailer and so no /Root for anyone: the own reader's error stands.
    const noTrailer = latin1(text(good).replace(/trailer[\s\S]*startxref/, "startxref"));
    expect((await pdfError(probePdf(memoryRangeReader(noTrailer)))).message).toMatch(/broken cross-reference/);
    const badEntry = latin1(text(good).replace(/\n(\d{10}) 00000 n \n(trailer)/, "\nxxxxxxxxxx 00000 n \n$2"));
    expect(await probePdf(memoryRangeReader(badEntry))).toMatchObject({ pageCount: 0, pageCountSource: "pdfjs" });
  });

  it("deeply nested objects and a page tree cycle", async () => {
    const deep = buildPdf({ 1: `<< /Type /Catalog /Pages 2 0 R /X ${"[".repeat(5000)} >>`, 2: "<< /Type /Pages /Kids [] /Count 0 >>" }, { root: 1 });
    await quick(deep, /too deep/);
    const cycle = buildPdf(
      { 1: "<< /Type /Catalog /Pages 2 0 R >>", 2: "<< /Type /Pages /Kids [3 0 R] /Count 5 >>", 3: "<< /Type /Pages /Kids [2 0 R] /Count 5 >>" },
      { root: 1 },
    );
    expect((await pdfError(readPdfPages(memoryRangeReader(cycle), 1, 1))).message).toMatch(/page tree|Pages tree/);
  });

  it("a failing reader surfaces its own error, not a PdfError", async () => {
    const pdf = await kumquatPdf(1, true);
    const good = memoryRangeReader(pdf);
    let calls = 0;
    const flaky = { size: pdf.length, read: async (o: number, l: number) => (++calls > 3 ? Promise.reject(new TypeError("R2 is down")) : good.read(o, l)) };
    const err = await probePdf(flaky).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(PdfError);
    expect((err as Error).message).toBe("R2 is down");
  });

  it("an invalid range is a PdfError", async () => {
    const pdf = await kumquatPdf(2, true);
    expect((await pdfError(readPdfPages(memoryRangeReader(pdf), 0, 1))).message).toMatch(/invalid page range/);
    expect((await pdfError(readPdfPages(memoryRangeReader(pdf), 2, 1))).message).toMatch(/invalid page range/);
    expect((await pdfError(readPdfPages(memoryRangeReader(pdf), 3, 3))).message).toBe("page 3 is past the end: the document has 2 pages");
  });

  it("fuzzed files (flipped bytes, cut tails, spliced middles) succeed or fail with a PdfError", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 12; i++) doc.addPage([200, 200]).drawText(`fuzz page ${i}`, { x: 10, y: 100, size: 12, font });
    doc.setTitle("fuzz");
    const sources = [await doc.save({ useObjectStreams: true }), await doc.save({ useObjectStreams: false })];
    const rand = prng(42);
    const t0 = Date.now();
    let failures = 0;
    for (let iter = 0; iter < 400; iter++) {
      const src = sources[iter % 2];
      let bytes: Uint8Array = src.slice();
      const mode = iter % 4;
      if (mode <= 1) {
        for (let k = 0; k < 1 + Math.floor(rand() * 8); k++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
      } else if (mode === 2) {
        bytes = bytes.slice(0, Math.floor(rand() * bytes.length));
      } else {
        const a = Math.floor(rand() * bytes.length);
        const b = a + Math.floor(rand() * 400);
        bytes = concat([bytes.subarray(0, a), bytes.subarray(Math.min(b, bytes.length))]);
      }
      for (const run of [() => probePdf(memoryRangeReader(bytes)), () => readPdfPages(memoryRangeReader(bytes), 1, 12)]) {
        try {
          await run();
        } catch (err) {
          failures++;
          expect(err).toBeInstanceOf(PdfError);
          // "damaged PDF:" marks a TypeError/RangeError caught by the last-resort guard: a bug.
          expect((err as Error).message).not.toMatch(/^damaged PDF:/);
        }
      }
    }
    expect(failures).toBeGreaterThan(50); // the fuzzing really damages files
    expect(Date.now() - t0).toBeLessThan(20_000);
  }, 30_000);
});
