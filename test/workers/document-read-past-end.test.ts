// document_read from an offset past the document's text is an error naming how long the text is,
// as file_read, pdf_read and spreadsheet_read are for a start past their end: not an empty page
// the model cannot tell from an empty document.
import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { toolText, upload } from "./attachment-helpers";
import { createConversation, send } from "./helpers";

const xml = (s: string) => new TextEncoder().encode(`<?xml version="1.0" encoding="UTF-8"?>${s}`);
const docx = (paragraphs: string[]) =>
  zipSync({
    "word/document.xml": xml(
      `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${paragraphs
        .map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`)
        .join("")}</w:body></w:document>`,
    ),
  });

describe("document_read past the end", () => {
  it("is an error naming the text's length; the last character's offset still reads it", async () => {
    const id = await createConversation();
    // "Mission brief\nLaunch at dawn.": 29 characters.
    const doc = await upload(id, "brief.docx", docx(["Mission brief", "Launch at dawn."]), "application/octet-stream");
    expect(doc.status).toBe(201);
    const past = await send(id, `@tool document_read {"attachment_id":"${doc.json.id}","offset":500}`);
    expect(past.json.messages[2].content[0].is_error).toBe(true);
    expect(toolText(past)).toBe(
      "document_read: brief.docx has 29 characters of text; offset 500 is past its end (read from offset 0 to 28)",
    );
    const atEnd = await send(id, `@tool document_read {"attachment_id":"${doc.json.id}","offset":29}`);
    expect(atEnd.json.messages[2].content[0].is_error).toBe(true);
    const last = await send(id, `@tool document_read {"attachment_id":"${doc.json.id}","offset":28}`);
    expect(last.json.messages[2].content[0].is_error).toBeFalsy();
    expect(toolText(last)).toBe("[document_read: brief.docx, chars 28-29]\n.");
  });
});
