// A PDF's note names only a pdf_read that can succeed: never pages past its count, and no reading
// tool at all when the file could not be inspected.
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { type AttachmentFacts, attachmentNote } from "../../services/attachments/note";
import { createConversation, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

async function pdfOf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([200, 200]).drawText(`page ${i} quince${i}`, { x: 10, y: 100, size: 12, font });
  return doc.save({ useObjectStreams: false });
}

const call = (note: string) => /pdf_read (\{[^}]*\})/.exec(note)?.[1];

describe("a PDF's note", () => {
  it("of a large 2-page PDF names a pdf_read of pages 1-2 that reads them", async () => {
    const id = await createConversation();
    const up = await upload(id, "scan.pdf", await pdfOf(2), "application/pdf");
    expect(up.json.facts.pageCount).toBe(2);
    // The note a 21 MiB scan of those two pages gets (the large tier).
    const note = attachmentNote({ ...up.json, facts: up.json.facts as AttachmentFacts, size: 21 * 1024 * 1024 });
    expect(note).toContain("large file");
    expect(call(note)).toContain('"pages":"1-2"');
    const r = await send(id, `@tool pdf_read ${call(note)}`);
    expect(r.json.messages[2].content[0].is_error).toBeFalsy();
    expect(toolText(r)).toContain("quince2");
  });

  it("under a password names pages within the count, and 1-5 only when the count is unknown", () => {
    const base = { id: "att_1", name: "l.pdf", type: "application/pdf", size: 1000 };
    const known = attachmentNote({
      ...base,
      facts: { kind: "pdf", pageCount: 3, encrypted: true, passwordRequired: true },
    });
    expect(known).toContain('"pages":"1-3","password":"..."');
    const unknown = attachmentNote({ ...base, facts: { kind: "pdf", encrypted: true, passwordRequired: true } });
    expect(unknown).toContain('"pages":"1-5","password":"..."');
  });

  it("of a PDF that could not be inspected names no pdf_read or pdf_search and says it could not be read", async () => {
    const id = await createConversation();
    const up = await upload(
      id,
      "broken.pdf",
      "%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n",
      "application/pdf",
    );
    expect(up.json.facts).toMatchObject({ kind: "pdf" });
    expect(up.json.facts.problem).toBeTruthy();
    expect(up.json.note).not.toContain("pdf_read");
    expect(up.json.note).not.toContain("pdf_search");
    expect(up.json.note).toMatch(/could not be read/);
  });
});
