// The document format (DOCX): the paragraph count for the note; text read from a character offset.
import { type AttachmentFormat, counted } from "../format";
import { DOCX_TYPE } from "../shared/magic";
import { docxText } from "./docx";

export const docxFormat = {
  kind: "document",
  detect: (s) => s.type === DOCX_TYPE,
  probe: async (reader) => ({ facts: { paragraphs: (await docxText(reader, { maxChars: 1 })).paragraphs } }),
  keepsKindWhenUnreadable: true,
  tools: ["document_read"],
  note: (f, { arg }) => ({
    facts: f.paragraphs !== undefined ? [counted(f.paragraphs, "paragraph")] : [],
    how: `Read it with document_read {${arg}}.`,
  }),
  read: docxText,
} satisfies AttachmentFormat<"document">;
