// The PDF format: page count, title and encryption from the cross-reference data; page ranges read
// by the own parser, with pdf.js as the fallback.
import { count, type AttachmentFormat } from "../format";
import { probePdf, readPdfPages } from "./read";

export const pdfFormat = {
  kind: "pdf",
  detect: (s) => s.type === "application/pdf",
  async probe(reader) {
    const info = await probePdf(reader);
    const pw = info.passwordRequired ? { passwordRequired: true } : {};
    return { facts: { pageCount: info.pageCount, pageCountSource: info.pageCountSource, pdfTitle: info.title, encrypted: info.encrypted, ...pw } };
  },
  keepsKindWhenUnreadable: true,
  tools: ["pdf_info", "pdf_read", "pdf_search"],
  note(f, { arg, tier }) {
    const facts: string[] = [];
    if (f.pageCount !== undefined) facts.push(`${count(f.pageCount)} pages`);
    if (f.pdfTitle) facts.push(`title "${f.pdfTitle}"`);
    if (f.encrypted && !f.passwordRequired) facts.push("encrypted");
    if (f.passwordRequired) facts.push("encrypted; ask the user for the password");
    if (f.pageCountSource === "pdfjs") facts.push("page count recovered by pdf.js (damaged or encrypted index)");
    const how = f.passwordRequired
      ? `Once the user gives the password, pass it as "password" to pdf_info, pdf_read: pdf_read {${arg},"pages":"1-5","password":"..."}.`
      : (f.pageCount ?? 0) > 50 || tier === "large"
        ? `Read it a page range at a time: pdf_read {${arg},"pages":"1-5"}; find pages with pdf_search {${arg},"query":"..."} (the first search indexes it and may take a minute).`
        : `Read it with pdf_read {${arg},"pages":"1-${Math.min(f.pageCount ?? 1, 10)}"}; pdf_search finds pages by words.`;
    return { facts, how };
  },
  read: readPdfPages,
} satisfies AttachmentFormat<"pdf">;
