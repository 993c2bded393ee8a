// Incremental updates: the newest cross-reference section and trailer win, hybrid chains and
// /Prev loops.
import { StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { probePdf, readPdfPages } from "../../services/attachments/formats/pdf/read";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import {
  type Body,
  buildPdf,
  concat,
  helvetica,
  incrementalUpdate,
  kumquatPdf,
  latin1,
  startxrefOf,
  stream,
  text,
} from "./pdf-builders";

/** Appends an update section (new or replaced objects, classic xref) with a /Prev trailer. */
function appendUpdate(base: Uint8Array, objects: Record<number, Body>, trailer: string): Uint8Array {
  const parts: Uint8Array[] = [base];
  let offset = base.length;
  let xref = "xref\n";
  for (const [num, body] of Object.entries(objects)) {
    const chunk = concat([
      latin1(`${num} 0 obj\n`),
      typeof body === "string" ? latin1(body) : body,
      latin1("\nendobj\n"),
    ]);
    xref += `${num} 1\n${String(offset).padStart(10, "0")} 00000 n \n`;
    parts.push(chunk);
    offset += chunk.length;
  }
  parts.push(latin1(`${xref}trailer\n<< ${trailer} /Prev ${startxrefOf(base)} >>\nstartxref\n${offset}\n%%EOF\n`));
  return concat(parts);
}

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
    const out = await readPdfPages(memoryRangeReader(updated), { from: 3, to: 4 });
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
    const out = await readPdfPages(memoryRangeReader(twice), { from: 1, to: 2 });
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
      expect(await probePdf(memoryRangeReader(base))).toMatchObject({
        pageCount: 1,
        title: "Old title",
        author: "Kept author",
      });
      expect(await probePdf(memoryRangeReader(updated))).toMatchObject({
        pageCount: 2,
        title: "New title",
        author: null,
      });
      expect((await readPdfPages(memoryRangeReader(updated), { from: 1, to: 2 })).pages.map((p) => p.text)).toEqual([
        "original page",
        "added page",
      ]);
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
    expect((await readPdfPages(memoryRangeReader(looped), { from: 1, to: 1 })).pages[0].text).toBe("looped");
  });
});
