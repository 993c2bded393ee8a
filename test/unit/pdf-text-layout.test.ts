// Page text laid out from glyph positions in device space: the CTM (`cm`, forms' /Matrix),
// clipping (`re W n`, form /BBox, the page's crop box), character and word spacing inside a
// string, spaces that take no room, rotated text, and fake bold (glyphs drawn twice).
import { describe, expect, it } from "vitest";
import { readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { type Body, buildPdf, helvetica, stream } from "./pdf-builders";

/** One page of Helvetica text (F1), with optional extra objects and page entries. */
function onePage(
  content: string,
  opts: { page?: string; resources?: string; objects?: Record<number, Body> } = {},
): Uint8Array {
  return buildPdf(
    {
      1: "<< /Type /Catalog /Pages 2 0 R >>",
      2: "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      3: `<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> ${opts.resources ?? ""} >> ${opts.page ?? ""} >>`,
      4: stream("", content),
      5: helvetica,
      ...opts.objects,
    },
    { root: 1 },
  );
}

const pageTexts = async (pdf: Uint8Array, pages = 1) =>
  (await readPdfPages(memoryRangeReader(pdf), { from: 1, to: pages })).pages.map((p) => p.text);

describe("text layout from glyph positions", () => {
  it("places strings by the CTM: tick labels set by `cm` and `0 0 Td` are separate words and lines", async () => {
    // As plotting libraries write axis labels: each in its own q/cm/BT block at text origin 0 0.
    const label = (x: number, y: number, s: string) => `q 1 0 0 1 ${x} ${y} cm BT /F1 10 Tf 0 0 Td (${s}) Tj ET Q`;
    const content = [
      label(60, 40, "0.0"),
      label(120, 40, "0.5"),
      label(180, 40, "1.0"),
      label(30, 80, "10"),
      label(30, 120, "20"),
    ].join("\n");
    const [text] = await pageTexts(onePage(content, { page: "/MediaBox [0 0 300 200]" }));
    expect(text).toBe("0.0 0.5 1.0\n10\n20");
  });

  it("drops glyphs outside the clip: a two-page spread drawn as a clipped form shows one half per page", async () => {
    // The spread (600 wide) is one form; page 1 shows its left half through a form whose /BBox
    // clips it, page 2 its right half through an `re W n` clip. A word across the fold ("gutter")
    // goes with the page it starts on.
    const spread =
      "BT /F1 12 Tf 40 100 Td (left kumquat) Tj 250 0 Td (gutter) Tj ET BT /F1 12 Tf 340 100 Td (right persimmon) Tj ET";
    const pdf = buildPdf(
      {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: "<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 /MediaBox [0 0 600 200] >>",
        3: "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /XObject << /Half 9 0 R >> >> >>",
        4: stream("", "/Half Do"),
        5: helvetica,
        6: "<< /Type /Page /Parent 2 0 R /Contents 7 0 R /Resources << /XObject << /Spread 8 0 R >> >> >>",
        7: stream("", "q 0 0 300 200 re W n 1 0 0 1 -300 0 cm /Spread Do Q"),
        8: stream("/Type /XObject /Subtype /Form /BBox [0 0 600 200] /Resources << /Font << /F1 5 0 R >> >>", spread),
        9: stream(
          "/Type /XObject /Subtype /Form /BBox [0 0 300 200] /Resources << /XObject << /Spread 8 0 R >> >>",
          "/Spread Do",
        ),
      },
      { root: 1 },
    );
    expect(await pageTexts(pdf, 2)).toEqual(["left kumquat gutter", "right persimmon"]);
  });

  it("drops glyphs outside the page's crop box", async () => {
    const content = "BT /F1 12 Tf 40 100 Td (inside) Tj 300 0 Td (outside) Tj ET";
    const [text] = await pageTexts(onePage(content, { page: "/MediaBox [0 0 600 200] /CropBox [0 0 300 200]" }));
    expect(text).toBe("inside");
  });

  it("sees gaps made by character spacing inside one string: table cells and word spaces", async () => {
    // Cells of one row as one string spread by Tc; a word space made by Tc inside a two-glyph
    // string ("sb", the TJ adjustment taking the spacing back after it).
    const content = [
      "BT /F1 10 Tf 72 700 Td 20 Tc (123) Tj ET",
      "BT /F1 10 Tf 72 680 Td 0 Tc [(Thi)] TJ 3 Tc [(sb) 300] TJ 0 Tc [(ook)] TJ ET",
    ].join("\n");
    const [text] = await pageTexts(onePage(content));
    expect(text).toBe("1 2 3\nThis book");
  });

  it("drops a literal space that takes no room (negative word spacing cancels it)", async () => {
    const content = "BT /F1 10 Tf 72 700 Td -2.78 Tw (to gether) Tj 0 Tw ( and apart) Tj ET";
    const [text] = await pageTexts(onePage(content));
    expect(text).toBe("together and apart");
  });

  it("measures gaps along the writing direction: rotated text keeps its word spaces and lines", async () => {
    // Written upwards (90 degrees): the gap between the words is along y, the next line along -x.
    const content = [
      "BT /F1 10 Tf 0 1 -1 0 100 50 Tm (rotated) Tj ET",
      "BT /F1 10 Tf 0 1 -1 0 100 85 Tm (words) Tj ET",
      "BT /F1 10 Tf 0 1 -1 0 112 50 Tm (next line) Tj ET",
    ].join("\n");
    const [text] = await pageTexts(onePage(content));
    expect(text).toBe("rotated words\nnext line");
  });

  it("merges fake bold (the same glyphs drawn twice, a hair apart) instead of breaking lines", async () => {
    // Line 1 draws each glyph twice, each placed by Tm and shown by ' (which moves to the next
    // line first); line 2 draws the whole word twice, the second time 0.4 units to the right.
    const glyphs: [string, number][] = [
      ["B", 72],
      ["o", 78.67],
      ["l", 84.23],
      ["d", 86.45],
    ];
    const perGlyph = glyphs
      .map(([g, x]) => `1 0 0 1 ${x} 700 Tm (${g}) ' 1 0 0 1 ${x + 0.3} 700 Tm (${g}) '`)
      .join(" ");
    const content = [
      `BT /F1 10 Tf 12 TL ${perGlyph} ET`,
      "BT /F1 10 Tf 72 680 Td (Heavy) Tj 0.4 0 Td (Heavy) Tj ( words) Tj ET",
    ].join("\n");
    const [text] = await pageTexts(onePage(content));
    expect(text).toBe("Bold\nHeavy words");
  });
});

describe("glyph widths and sizes that layout depends on", () => {
  /** A ToUnicode CMap for two-byte codes: code n (from 1) is the n-th character of `chars`. */
  const toUnicode = (chars: string) =>
    stream(
      "",
      `1 begincodespacerange <0000> <FFFF> endcodespacerange ${chars.length} beginbfchar ${[...chars]
        .map((c, i) => `<${(i + 1).toString(16).padStart(4, "0")}> <${c.charCodeAt(0).toString(16).padStart(4, "0")}>`)
        .join(" ")} endbfchar`,
    );
  const hex = (codes: number[]) => `<${codes.map((c) => c.toString(16).padStart(4, "0")).join("")}>`;

  it("writes vertical text (Identity-V) down the page: one column a line, none of it clipped", async () => {
    // Two columns of five glyphs at 20 points, right to left, on a page 200 wide: laid out
    // sideways the first column would run off the page.
    const content = `BT /F1 20 Tf 150 180 Td ${hex([1, 2, 3, 4, 5])} Tj -40 0 Td ${hex([6, 7, 8, 9, 10])} Tj ET`;
    const pdf = onePage(content, {
      page: "/MediaBox [0 0 200 200]",
      objects: {
        5: "<< /Type /Font /Subtype /Type0 /BaseFont /KozMin /Encoding /Identity-V /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>",
        6: "<< /Type /Font /Subtype /CIDFontType0 /BaseFont /KozMin /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>",
        7: toUnicode("あいうえおかきくけこ"),
      },
    });
    expect((await pageTexts(pdf))[0]).toBe("あいうえお\nかきくけこ");
  });

  it("measures a Type0 font through its embedded CMap's code-to-CID mapping (cidrange)", async () => {
    // Codes 0x41.. are CIDs 1..; /W gives those CIDs half an em, while /DW (what the codes would
    // get read as CIDs) is a whole one. "DEF" starts 0.3 em after "ABC" ends.
    const content = "BT /F1 20 Tf 100 100 Td (ABC) Tj 36 0 Td (DEF) Tj ET";
    const cmap =
      "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Test-H def /WMode 0 def 1 begincodespacerange <00> <FF> endcodespacerange 1 begincidrange <41> <46> 1 endcidrange endcmap end end";
    const pdf = onePage(content, {
      page: "/MediaBox [0 0 200 200]",
      objects: {
        5: "<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding 8 0 R /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>",
        6: "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 /W [1 6 500] >>",
        7: stream("", "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfrange <41> <46> <0041> endbfrange"),
        8: stream(
          "/Type /CMap /CMapName /Test-H /CIDSystemInfo << /Registry (Adobe) /Ordering (Test) /Supplement 0 >>",
          cmap,
        ),
      },
    });
    expect((await pageTexts(pdf))[0]).toBe("ABC DEF");
  });

  it("sizes a Type 3 font by its glyphs, not the font size it is scaled by", async () => {
    // /FontMatrix 0.0005 and 200-point text: glyphs about 20 points, lines 24 apart.
    const letters = "abcdefghijklmnopqrstuvwxyz";
    const procs = [...letters].map((c) => `/${c} 9 0 R`).join(" ");
    const content = "BT /F1 200 Tf 20 150 Td (type three) Tj 0 -24 Td (second line) Tj ET";
    const pdf = onePage(content, {
      page: "/MediaBox [0 0 400 200]",
      objects: {
        5: `<< /Type /Font /Subtype /Type3 /FontBBox [0 0 200 200] /FontMatrix [0.0005 0 0 0.0005 0 0] /CharProcs << ${procs} /space 9 0 R >> /Encoding << /Type /Encoding /Differences [32 /space 97 ${[...letters].map((c) => `/${c}`).join(" ")}] >> /FirstChar 32 /LastChar 122 /Widths [50 ${"0 ".repeat(64)}${"100 ".repeat(26)}] /Resources << >> >>`,
        9: stream("", "100 0 d0"),
      },
    });
    expect((await pageTexts(pdf))[0]).toBe("type three\nsecond line");
  });

  it("keeps a literal space that takes room even where estimated widths hide the gap after it", async () => {
    // Times-Roman without /Widths is measured with Helvetica's wider widths, so the next word,
    // placed with Times' own, seems to start before the space ends.
    const content = "BT /F2 10 Tf 72 700 Td (mmmmmmmmmm ) Tj 80.3 0 Td (next) Tj ET";
    const pdf = onePage(content, {
      resources: "",
      objects: {
        3: "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F2 5 0 R >> >> >>",
        5: "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
      },
    });
    expect((await pageTexts(pdf))[0]).toBe("mmmmmmmmmm next");
  });

  it("reads letter-spaced (tracked) text as words: only gaps wider than the tracking are spaces", async () => {
    const content = [
      "BT /F1 12 Tf 72 700 Td 2 Tc (SUMMARY) Tj ET",
      "BT /F1 12 Tf 72 680 Td 2 Tc (double quoted) Tj ET",
    ].join("\n");
    expect((await pageTexts(onePage(content)))[0]).toBe("SUMMARY\ndouble quoted");
  });
});
