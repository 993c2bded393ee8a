// Hand-built PDF structures: xref streams and object streams, text operators, fonts, page trees,
// encryption and content filters.
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { NEEDS_PASSWORD, probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import {
  type Body,
  buildPdf,
  concat,
  helvetica,
  incrementalUpdate,
  kumquatPdf,
  latin1,
  pdfError,
  startxrefOf,
  stream,
  text,
} from "./pdf-builders";

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
    expect((await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 })).pages[0].text).toBe("predicted");
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
    expect((await readPdfPages(memoryRangeReader(hybrid), { from: 1, to: 1 })).pages[0].text).toBe("hybrid");
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
    const out = await readPdfPages(memoryRangeReader(buildPdf(pageObjects(content), { root: 1 })), { from: 1, to: 1 });
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
    objects[5] =
      "<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>";
    objects[6] =
      "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>";
    objects[7] = stream("", cmap);
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), { from: 1, to: 1 });
    expect(out.pages[0].text).toBe("Hi!09中 文😀");
  });

  it("simple fonts: /Differences glyph names over a base encoding, and ToUnicode overriding it", async () => {
    const objects = pageObjects("BT /F1 12 Tf (ABC) Tj /F2 12 Tf (ABC) Tj ET", "<< /Font << /F1 5 0 R /F2 6 0 R >> >>");
    objects[5] =
      "<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [65 /Euro /uni263A] >> >>";
    objects[6] = "<< /Type /Font /Subtype /TrueType /BaseFont /Y /ToUnicode 7 0 R >>";
    objects[7] = stream("", "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <42> <0078> endbfchar");
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), { from: 1, to: 1 });
    expect(out.pages[0].text).toBe("€☺CAxC");
  });

  it("multiple content streams, form XObjects followed, image data never read", async () => {
    const image = new Uint8Array(400_000).map((_, i) => (i * 7919) & 255);
    const objects = pageObjects("", "<< /Font << /F1 5 0 R >> /XObject << /Fm 8 0 R /Im 9 0 R >> >>");
    objects[3] =
      "<< /Type /Page /Parent 2 0 R /Contents [4 0 R 6 0 R] /Resources << /Font << /F1 5 0 R >> /XObject << /Fm 8 0 R /Im 9 0 R >> >> >>";
    objects[4] = stream("", "BT /F1 12 Tf (first stream) Tj ET /Im Do");
    objects[6] = stream(
      "",
      "/Fm Do BI /W 4 /H 4 /BPC 8 /CS /G ID \x00\xffEI\x01 (noise) Tj\x02 EI BT /F1 12 Tf (after the inline image) Tj ET",
    );
    objects[8] = stream(
      "/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /Font << /F7 5 0 R >> >>",
      "BT /F7 12 Tf (inside a form) Tj ET",
    );
    objects[9] = stream(
      "/Type /XObject /Subtype /Image /Width 400 /Height 1000 /ColorSpace /DeviceGray /BitsPerComponent 8",
      image,
      "/DCTDecode",
    );
    const pdf = buildPdf(objects, { root: 1 });
    const r = memoryRangeReader(pdf);
    const out = await readPdfPages(r, { from: 1, to: 1 });
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
      objects[num] =
        `<< /Type /Pages /Parent ${parent} 0 R /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${count} >>`;
      return [num, count];
    };
    const [top, total] = build(2, 1, 1);
    objects[2] = `<< /Type /Pages /Kids [${top} 0 R] /Count ${total} /Resources << /Font << /F1 5 0 R >> >> >>`;
    for (const xref of ["table", "stream"] as const) {
      const pdf = buildPdf(objects, { root: 1, xref });
      expect((await probePdf(memoryRangeReader(pdf))).pageCount).toBe(1000);
      const r = memoryRangeReader(pdf);
      const out = await readPdfPages(r, { from: 777, to: 778 });
      expect(out.pages.map((p) => p.text)).toEqual(["leaf 777 persimmon777", "leaf 778 persimmon778"]);
      expect(r.bytesRead).toBeLessThan(0.15 * pdf.length);
    }
  });

  it("an /Encrypt entry: probePdf says encrypted (count still read), readPdfPages refuses", async () => {
    const base = await kumquatPdf(2, false);
    const encrypted = await incrementalUpdate(
      base,
      async () => {},
      "/Encrypt << /Filter /Standard /V 2 /R 3 /O <00> /U <00> /P -4 >>",
    );
    const info = await probePdf(memoryRangeReader(encrypted));
    expect(info).toMatchObject({ encrypted: true, pageCount: 2, title: null });
    // Its /O and /U hold no real password check: pdf.js finds the empty password wrong.
    expect(info.passwordRequired).toBe(true);
    expect((await pdfError(readPdfPages(memoryRangeReader(encrypted), { from: 1, to: 1 }))).message).toBe(
      NEEDS_PASSWORD,
    );
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
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), { from: 1, to: 1 });
    expect(out.pages).toEqual([{ page: 1, text: "" }]);
  });

  it("ASCIIHex and ASCII85 content filters decode (chained with Flate)", async () => {
    const hex = `${Buffer.from(deflateSync(latin1("BT /F1 12 Tf (hex and flate) Tj ET"))).toString("hex")}>`;
    const objects = pageObjects(stream("", hex, "[/ASCIIHexDecode /FlateDecode]"));
    objects[6] = stream("", "<~6<#'\\7PQ#?1*BP.+=LZ>@qfX:2'@*]Ebf_F+B3(u78s~>", "/ASCII85Decode");
    objects[3] = "<< /Type /Page /Parent 2 0 R /Contents [4 0 R 6 0 R] /Resources << /Font << /F1 5 0 R >> >> >>";
    const out = await readPdfPages(memoryRangeReader(buildPdf(objects, { root: 1 })), { from: 1, to: 1 });
    // Both streams start their text at the origin, on one baseline: one line.
    expect(out.pages[0].text).toBe("hex and flate ascii85 works");
  });
});
