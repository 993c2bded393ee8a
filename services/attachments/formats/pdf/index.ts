// The PDF format: page count, title and encryption from the cross-reference data; page ranges read
// by the own parser, with pdf.js as the fallback.
import { type AttachmentFormat, counted, noteText } from "../format";
import { hasPdfHeaderNear } from "../shared/magic";
import { probePdf, readPdfPages } from "./read";

const PDF_TYPE = "application/pdf";
/** The name or the declared type says PDF: worth a probe even without a %PDF- header at the start. */
const claimsPdf = (name: string, declared: string | null) =>
  /\.pdf$/i.test(name) || declared?.split(";")[0].trim().toLowerCase() === PDF_TYPE;

export const pdfFormat = {
  kind: "pdf",
  detect: (s) => s.type === PDF_TYPE,
  // pdf.js opens a file whose header is late (within 1024 bytes) or missing; so does the probe, but
  // such a file is a PDF only when the probe reads it.
  detectIfReadable: (s) => hasPdfHeaderNear(s.head) || claimsPdf(s.name, s.declaredType),
  async probe(reader) {
    const info = await probePdf(reader);
    const pw = info.passwordRequired ? { passwordRequired: true } : {};
    return {
      type: PDF_TYPE,
      facts: {
        pageCount: info.pageCount,
        pageCountSource: info.pageCountSource,
        pdfTitle: info.title,
        encrypted: info.encrypted,
        ...pw,
      },
    };
  },
  keepsKindWhenUnreadable: true,
  tools: ["pdf_info", "pdf_read", "pdf_search"],
  note(f, { arg, tier }) {
    const facts: string[] = [];
    if (f.pageCount !== undefined) facts.push(counted(f.pageCount, "page"));
    if (f.pdfTitle) facts.push(`title "${noteText(f.pdfTitle)}"`);
    if (f.encrypted && !f.passwordRequired) facts.push("encrypted");
    if (f.passwordRequired) facts.push("encrypted; ask the user for the password");
    if (f.pageCountSource === "pdfjs") facts.push("page count recovered by pdf.js (damaged or encrypted index)");
    // Pages the note names exist: never past the count (1-5 only while a password hides it).
    const pages = (n: number, unknown = n) => `1-${Math.max(1, Math.min(f.pageCount ?? unknown, n))}`;
    const how = f.problem
      ? "It could not be read: no tool reads its text; ask the user for a copy that opens."
      : f.passwordRequired
        ? `Once the user gives the password, pass it as "password" to pdf_info, pdf_read, pdf_search: pdf_read {${arg},"pages":"${pages(5)}","password":"..."}.`
        : f.pageCount === 0
          ? "It has no pages: there is no text to read."
          : (f.pageCount ?? 0) > 50 || tier === "large"
            ? `Read it a page range at a time: pdf_read {${arg},"pages":"${pages(5)}"}; find pages with pdf_search {${arg},"query":"..."} (the first search indexes it and may take a minute).`
            : `Read it with pdf_read {${arg},"pages":"${pages(10, 1)}"}; pdf_search finds pages by words.`;
    return { facts, how };
  },
  read: readPdfPages,
} satisfies AttachmentFormat<"pdf">;
