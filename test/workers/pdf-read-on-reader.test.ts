// pdf_read's read-on inside a long page picks the same reader as the first read. Rule (API notes,
// pdf_read): "A page `pdf_read` cuts at its cap is a prefix of the page's whole text: … so the
// named read-on `offset` gives the rest of the page with nothing skipped or repeated." The own
// reader used to stop at the cap before meeting a glyph it cannot map further down the page, so
// the first (capped) read kept its text while the read-on (a larger cap) met that glyph and fell
// back to pdf.js, whose text differs (ligatures, word order of lines drawn out of order): the
// offset then pointed into another text and lines went missing or came twice.
import { describe, expect, it } from "vitest";
import { readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { toolText, upload } from "./attachment-helpers";
import { createConversation, send } from "./helpers";

/**
 * One page of 900 numbered lines (about 75 characters each, some 67,000 characters) in Helvetica
 * through `encoding`; `line` writes line `l` at height `y`. With `unmappable`, two glyphs of a font
 * with no known mapping follow at the page's foot, past the 60,000-character cap.
 */
function longPagePdf({
  line,
  unmappable,
  encoding = "/WinAnsiEncoding",
}: {
  line: (l: number, y: number) => string;
  unmappable: boolean;
  encoding?: string;
}): Uint8Array {
  const parts: string[] = [];
  for (let l = 1; l <= 900; l++) parts.push(line(l, 9000 - l * 9.5));
  if (unmappable) parts.push("BT /F2 10 Tf 20 5 Td <0102> Tj ET");
  const content = parts.join("\n");
  const objs = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 1000 9100] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>",
    `<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding ${encoding} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Mystery /FirstChar 1 /LastChar 2 /Widths [500 500] /Encoding << /Type /Encoding /Differences [1 /g17 /g18] >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Uint8Array.from(out, (c) => c.charCodeAt(0));
}

const n5 = (l: number) => String(l).padStart(5, "0");
/** "o<fi>ce": an fi ligature glyph (one character to the own reader, "fi" to pdf.js). */
const ligatureLine = (l: number, y: number) => `BT /F1 8 Tf 20 ${y} Td (L${n5(l)} of\\200ce ${"q".repeat(55)}) Tj ET`;
const LIGATURE_ENCODING = "<< /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [128 /fi] >>";
/** A line drawn right part first: "right left" to the own reader, "rightleft" to pdf.js. */
const backwardsLine = (l: number, y: number) =>
  `BT /F1 8 Tf 300 ${y} Td (L${n5(l)} right) Tj -250 0 Td (left ${"q".repeat(50)}) Tj ET`;

const CUT = /\n\n\[pdf_read: stopped at the 60,000-char cap in page (\d+); read on with pdf_read (\{.*\})\]$/;

/** Reads page 1 with pdf_read, then reads on as its cut note says; the line numbers both gave. */
async function readAndReadOn(bytes: Uint8Array) {
  const id = await createConversation();
  const up = await upload(id, "long.pdf", bytes, "application/pdf");
  expect(up.status, up.text).toBe(201);
  const read = async (args: Record<string, unknown>) =>
    toolText(await send(id, `@tool pdf_read ${JSON.stringify({ attachment_id: up.json.id, ...args })}`));
  const first = await read({ pages: "1" });
  const cut = CUT.exec(first);
  expect(cut, first.slice(-300)).not.toBeNull();
  const readOn = JSON.parse(cut![2]) as Record<string, unknown>;
  expect(readOn.offset).toEqual(expect.any(Number));
  const second = await read(readOn);
  const body1 = first.replace(CUT, "").replace(/^--- page 1 of long\.pdf\n/, "");
  const body2 = second.replace(/^--- page 1 of long\.pdf \(from character \d+\)\n/, "");
  const lines = (s: string) => [...s.matchAll(/L(\d{5})/g)].map((x) => Number(x[1]));
  const all = [...lines(body1), ...lines(body2)];
  return {
    seam: `${JSON.stringify(body1.slice(-90))} | ${JSON.stringify(body2.slice(0, 90))}`,
    repeated: all.filter((t, i) => all.indexOf(t) !== i),
    missing: Array.from({ length: 900 }, (_, i) => i + 1).filter((t) => !all.includes(t)),
  };
}

describe("pdf_read read-on inside a long page whose foot only pdf.js can read", () => {
  for (const unmappable of [false, true]) {
    const foot = unmappable ? "an unmappable glyph at the foot" : "no unmappable glyph";
    it(`lines drawn right part first, ${foot}: nothing skipped or repeated`, async () => {
      const r = await readAndReadOn(longPagePdf({ line: backwardsLine, unmappable }));
      expect({ repeated: r.repeated, missing: r.missing }, r.seam).toEqual({ repeated: [], missing: [] });
    });
    it(`fi ligatures, ${foot}: nothing skipped or repeated`, async () => {
      const r = await readAndReadOn(longPagePdf({ line: ligatureLine, unmappable, encoding: LIGATURE_ENCODING }));
      expect({ repeated: r.repeated, missing: r.missing }, r.seam).toEqual({ repeated: [], missing: [] });
    });
  }

  it("a capped read takes the page from the reader the search index's uncapped read takes", async () => {
    for (const pdf of [
      longPagePdf({ line: backwardsLine, unmappable: true }),
      longPagePdf({ line: ligatureLine, unmappable: true, encoding: LIGATURE_ENCODING }),
    ]) {
      const capped = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1, maxChars: 60_000 });
      const whole = await readPdfPages(memoryRangeReader(pdf), { from: 1, to: 1 });
      expect(capped.truncated).toBe(true);
      expect(capped.pages[0].text.length).toBeGreaterThan(50_000);
      expect(whole.pages[0].text.startsWith(capped.pages[0].text)).toBe(true);
    }
  });
});
