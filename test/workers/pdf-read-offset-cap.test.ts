// pdf_read's offset skips characters of the first page only: the pages after it get the 60,000-char
// cap as any read does, and an offset past the first page's end is refused whatever the range.
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { createConversation, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

const CAP = 60_000;
const CUT = /\[pdf_read: stopped at the 60,000-char cap in page (\d+); read on with pdf_read (\{.*\})\]$/;

/** A short first page, then 3 pages of about 33,000 characters each. */
async function longPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([300, 200]).drawText("short first page", { x: 20, y: 100, font, size: 12 });
  for (let p = 2; p <= 4; p++) {
    const page = doc.addPage([3000, 6000]);
    for (let l = 0; l < 300; l++)
      page.drawText(`p${p} line ${String(l).padStart(3, "0")} ${"quince ".repeat(13)}`, {
        x: 10,
        y: 5980 - l * 19,
        font,
        size: 10,
      });
  }
  return doc.save();
}

/** The page text a read shows: its pages' text without their headers and without the cut note. */
const shownChars = (out: string) =>
  out
    .replace(new RegExp(`\n\n${CUT.source}`), "")
    .split(/(?:^|\n\n)--- page \d+ of long\.pdf[^\n]*\n/)
    .join("").length;

describe("pdf_read with an offset", () => {
  it("shows at most its cap past the offset, and names the read-on call when cut", async () => {
    const id = await createConversation();
    const up = await upload(id, "long.pdf", await longPdf(), "application/pdf");
    expect(up.status, up.text).toBe(201);
    const read = async (args: Record<string, unknown>) =>
      toolText(await send(id, `@tool pdf_read ${JSON.stringify({ attachment_id: up.json.id, ...args })}`));

    // An offset past a short first page: refused, as on a single page, never a read of its whole budget.
    const past = await read({ pages: "1-4", offset: 100_000 });
    expect(past.length).toBeLessThan(CAP);
    expect(past).toMatch(/^offset: page 1 has \d+ characters; offset 100000 is past its end$/);

    // An offset inside the first page: the cap counts from the offset, across the later pages.
    const page2 = await read({ pages: "2" });
    const offset = page2.length - page2.indexOf("\n") - 1 - 3_000;
    const inside = await read({ pages: "2-4", offset });
    expect(inside).toContain(`--- page 2 of long.pdf (from character ${offset})`);
    expect(shownChars(inside)).toBeLessThanOrEqual(CAP);
    expect(shownChars(inside)).toBeGreaterThan(CAP - 200);
    const tail = CUT.exec(inside);
    expect(tail, inside.slice(-300)).not.toBeNull();
    const readOn = JSON.parse(tail![2]);
    expect(readOn).toEqual({ attachment_id: up.json.id, pages: "4", offset: expect.any(Number) });
    // Reading on gives the rest of page 4, uncut.
    const rest = await read({ pages: readOn.pages, offset: readOn.offset });
    expect(rest).toContain("p4 line 299");
    expect(rest).not.toMatch(CUT);

    // An offset at the first page's very end (what a cut there names) goes on with the next pages.
    const first = await read({ pages: "1" });
    const atEnd = await read({ pages: "1-2", offset: first.length - first.indexOf("\n") - 1 });
    expect(atEnd).toContain("p2 line 299");
  });
});
