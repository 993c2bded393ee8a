// The reference note an attachment becomes in the conversation: name, id, type, size, real facts
// and the tools that read it. Never the content. The tier varies with size: a small file's note
// invites reading it whole, a large one's says to go a range at a time or search.

export interface AttachmentFacts {
  kind: "pdf" | "text" | "image" | "spreadsheet" | "document" | "binary";
  pageCount?: number;
  pdfTitle?: string | null;
  encrypted?: boolean;
  /** Opens only with a user password nobody gave: the note asks for it. */
  passwordRequired?: boolean;
  /** How the page count was found: the file's own index, or pdf.js (recovered or decrypted). */
  pageCountSource?: "xref" | "pdfjs";
  lines?: number;
  width?: number;
  height?: number;
  format?: string;
  sheets?: { name: string; rows: number; columns: number }[];
  columns?: string[];
  rows?: number;
  paragraphs?: number;
  /** Why a fact could not be established (e.g. a corrupt PDF): said in the note, never hidden. */
  problem?: string;
}

/** Tools that read each kind of attachment; uploading one activates them in its conversation. */
export const TOOLS_FOR: Record<AttachmentFacts["kind"], string[]> = {
  pdf: ["pdf_info", "pdf_read", "pdf_search"],
  text: ["file_read"],
  image: ["image_view"],
  spreadsheet: ["spreadsheet_read"],
  document: ["document_read"],
  binary: [],
};

const SMALL = 200 * 1024;
const LARGE = 20 * 1024 * 1024;

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

const n = (x: number) => x.toLocaleString("en-US");

export function attachmentNote(a: { id: string; name: string; type: string; size: number; facts: AttachmentFacts }): string {
  const f = a.facts;
  const facts: string[] = [];
  let how = "";
  const arg = `"attachment_id":"${a.id}"`;
  switch (f.kind) {
    case "pdf":
      if (f.pageCount !== undefined) facts.push(`${n(f.pageCount)} pages`);
      if (f.pdfTitle) facts.push(`title "${f.pdfTitle}"`);
      if (f.encrypted && !f.passwordRequired) facts.push("encrypted");
      if (f.passwordRequired) facts.push("encrypted; ask the user for the password");
      if (f.pageCountSource === "pdfjs") facts.push("page count recovered by pdf.js (damaged or encrypted index)");
      how = f.passwordRequired
        ? `Once the user gives the password, pass it as "password" to pdf_info, pdf_read: pdf_read {${arg},"pages":"1-5","password":"..."}.`
        :
        (f.pageCount ?? 0) > 50 || a.size > LARGE
          ? `Read it a page range at a time: pdf_read {${arg},"pages":"1-5"}; find pages with pdf_search {${arg},"query":"..."} (the first search indexes it and may take a minute).`
          : `Read it with pdf_read {${arg},"pages":"1-${Math.min(f.pageCount ?? 1, 10)}"}; pdf_search finds pages by words.`;
      break;
    case "text":
      if (f.lines !== undefined) facts.push(`${n(f.lines)} lines`);
      how = a.size <= SMALL ? `Read it with file_read {${arg},"lines":"1-${Math.max(1, Math.min(f.lines ?? 400, 400))}"}.` : `Read it a line range at a time: file_read {${arg},"lines":"1-400"}.`;
      break;
    case "image":
      if (f.width && f.height) facts.push(`${f.width}x${f.height} ${f.format ?? ""}`.trim());
      how = `Look at it with image_view {${arg}} only when you need to see it.`;
      break;
    case "spreadsheet":
      if (f.sheets?.length) facts.push(`sheets: ${f.sheets.map((s) => `${s.name} (${n(s.rows)} rows x ${s.columns} columns)`).join(", ")}`);
      if (f.columns?.length) facts.push(`${n(f.rows ?? 0)} rows; columns: ${f.columns.slice(0, 12).join(", ")}${f.columns.length > 12 ? ", …" : ""}`);
      how = `Read rows with spreadsheet_read {${arg},"rows":"1-50"}${f.sheets?.length ? ` (add "sheet")` : ""}.`;
      break;
    case "document":
      if (f.paragraphs !== undefined) facts.push(`${n(f.paragraphs)} paragraphs`);
      how = `Read it with document_read {${arg}}.`;
      break;
    case "binary":
      how = "No tool reads this type; its bytes are stored.";
      break;
  }
  if (f.problem) facts.push(`could not be inspected: ${f.problem}`);
  const tier = a.size > LARGE ? "large file: never read it whole" : a.size > SMALL ? "medium file" : "small file";
  return [
    `<attachment id="${a.id}" name="${a.name}">`,
    `${a.type}, ${humanBytes(a.size)} (${tier})${facts.length ? `; ${facts.join("; ")}` : ""}.`,
    `${how} Its content is not in this conversation: do not answer about it before reading it.`,
    "</attachment>",
  ].join("\n");
}
