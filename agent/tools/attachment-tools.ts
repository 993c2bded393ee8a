// Tools that read attachments on demand, a range at a time, through ranged R2 reads. They are not
// core: uploading an attachment activates the ones its kind needs in that conversation.
import { z } from "zod";
import { docxFormat } from "../../services/attachments/formats/document";
import { imageFormat } from "../../services/attachments/formats/image";
import {
  MAX_MODEL_IMAGE_BYTES,
  MODEL_IMAGE_TYPES,
  modelImageProblem,
} from "../../services/attachments/formats/image/model-image";
import { pdfFormat } from "../../services/attachments/formats/pdf";
import { probePdf } from "../../services/attachments/formats/pdf/read";
import { delimitedFormat, delimiterOf, xlsxFormat } from "../../services/attachments/formats/spreadsheet";
import { textFormat } from "../../services/attachments/formats/text";
import { isId } from "../../core/ids";
import { sliceWhole } from "../../core/text-cut";
import type { AttachmentAccess, ToolAccess, ToolDefinition, ToolOutput } from "./registry";

const attachmentId = z.string().refine((v) => isId("att", v), "not an attachment id (att_…)");
const MAX_PDF_PAGES = 20;
const MAX_ROWS = 500;
const MAX_LINES = 2_000;
const DOC_PAGE_CHARS = 40_000;
/** The most text one pdf_read returns; past it the answer names the call that reads on. */
const PDF_READ_CHARS = 60_000;
/** The most row text one spreadsheet_read returns; past it the answer names the call that reads on. */
const SHEET_READ_CHARS = 60_000;

/** "12" or "12-15" -> [12, 15], or an error message. */
export function parseRange(spec: string, what: string, max: number): [number, number] | string {
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(spec);
  if (!m) return `${what}: give "N" or "N-M"`;
  const from = Number(m[1]);
  const to = m[2] ? Number(m[2]) : from;
  if (from < 1 || to < from) return `${what}: "${spec}" is not a range from 1 upward`;
  if (to - from + 1 > max) return `${what}: at most ${max} per call`;
  return [from, to];
}

async function open(ctx: AttachmentAccess, id: string, kinds: string[]) {
  const found = await ctx.openAttachment(id);
  if (!found) return { error: { content: `no attachment ${id}`, isError: true } as ToolOutput };
  if (!kinds.includes(found.attachment.facts.kind)) return { error: wrongKind(found.attachment, kinds.join(" or ")) };
  return { found };
}

const wrongKind = (a: { name: string; type: string }, reads: string, hint = ""): ToolOutput => ({
  content: `${a.name} is ${a.type}; this tool reads ${reads} files${hint}`,
  isError: true,
});

const fail = (err: unknown): ToolOutput => ({
  content: err instanceof Error ? err.message : String(err),
  isError: true,
});

export const fileRead: ToolDefinition<{ attachment_id: string; lines: string; offset?: number }, AttachmentAccess> = {
  name: "file_read",
  core: false,
  capability: "file_read: line ranges of text attachments, any size",
  description: `Read a line range of a text attachment (logs, code, CSV, JSON, notes). At most ${MAX_LINES} lines per call; the file is never loaded whole.`,
  input: z.strictObject({
    attachment_id: attachmentId,
    lines: z.string().max(40).describe('"1-400"'),
    offset: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe("bytes of the first line to skip: what a cut-short read names to read on inside a long line"),
  }),
  async run({ attachment_id, lines, offset }, ctx) {
    const range = parseRange(lines, "lines", MAX_LINES);
    if (typeof range === "string") return { content: range, isError: true };
    const { found, error } = await open(ctx, attachment_id, ["text", "spreadsheet"]);
    if (error) return error;
    const name = found!.attachment.name;
    // A spreadsheet is read as lines only when it is delimited text (CSV/TSV); an XLSX is a ZIP.
    if (found!.attachment.facts.sheets)
      return wrongKind(found!.attachment, "text, CSV or TSV", "; read its rows with spreadsheet_read");
    try {
      const { index, reader } = await found!.text();
      if (range[0] > index.lines) return { content: `lines: ${name} has ${index.lines} lines`, isError: true };
      const to = Math.min(range[1], index.lines);
      const out = await textFormat.read(reader, { index, from: range[0], to, skipBytes: offset });
      if (out.offsetPastLine)
        return {
          content: `offset: line ${range[0]} of ${name} ends before byte ${offset}; it is past its end`,
          isError: true,
        };
      // Cut short: the call that reads on, from inside the line when the cap fell in one.
      const cutLine = out.cutAtByte !== undefined ? out.to : out.to + 1;
      const readOn = {
        attachment_id,
        lines: `${cutLine}-${Math.max(cutLine, to)}`,
        ...(out.cutAtByte !== undefined ? { offset: out.cutAtByte } : {}),
      };
      // A read that got nothing (the lines before it too long to scan) names no read-on: the same call would fail again.
      if (out.truncated && (out.lines.length === 0 || (cutLine === range[0] && (out.cutAtByte ?? 0) === (offset ?? 0))))
        return {
          content: `file_read: line ${range[0]} of ${name} could not be reached within the bytes one call reads`,
          isError: true,
        };
      const more = out.truncated ? ` (cut at the size cap: read on with file_read ${JSON.stringify(readOn)})` : "";
      const from = offset ? ` (line ${out.from} from byte ${offset})` : "";
      return {
        content: `[file_read: ${name}, lines ${out.from}-${out.to} of ${index.lines}${from}${more}]\n${out.lines.join("\n")}`,
      };
    } catch (err) {
      return fail(err);
    }
  },
};

/** A PDF's user password, passed per call and never stored or echoed back (`secretInputs`). */
export const pdfPassword = z
  .string()
  .max(256)
  .describe("the PDF's user password, when the note says it needs one")
  .optional();

export const pdfInfo: ToolDefinition<{ attachment_id: string; password?: string }, AttachmentAccess> = {
  name: "pdf_info",
  core: false,
  capability: "pdf_info: facts of a PDF attachment (pages, title), from its cross-reference data",
  description:
    "Facts of a PDF attachment: pages, title, author, producer, encryption. Reads only the file's cross-reference data.",
  input: z.strictObject({ attachment_id: attachmentId, password: pdfPassword }),
  secretInputs: ["password"],
  async run({ attachment_id, password }, ctx) {
    const { found, error } = await open(ctx, attachment_id, ["pdf"]);
    if (error) return error;
    try {
      const info = await probePdf(found!.reader, { password });
      const facts = [
        `${info.pageCount} pages${info.pageCountSource === "pdfjs" ? " (recovered by pdf.js)" : ""}`,
        info.version && `PDF ${info.version}`,
        info.title && `title "${info.title}"`,
        info.author && `author ${info.author}`,
        info.producer && `producer ${info.producer}`,
        info.passwordRequired ? "encrypted; ask the user for the password" : info.encrypted && "encrypted",
      ].filter(Boolean);
      return { content: `${found!.attachment.name}: ${facts.join("; ")}` };
    } catch (err) {
      return fail(err);
    }
  },
};

export const pdfRead: ToolDefinition<
  { attachment_id: string; pages: string; offset?: number; password?: string },
  AttachmentAccess
> = {
  name: "pdf_read",
  core: false,
  capability: "pdf_read: the text of a page range of a PDF attachment",
  description: `Read the text of a page range of a PDF attachment ("12" or "12-15", at most ${MAX_PDF_PAGES} pages per call). Only the bytes of those pages are fetched.`,
  input: z.strictObject({
    attachment_id: attachmentId,
    pages: z.string().max(40).describe('"12" or "12-15"'),
    offset: z
      .number()
      .int()
      .min(0)
      .max(100_000_000)
      .optional()
      .describe("characters of the first page to skip: what a cut-short read names to read on inside a long page"),
    password: pdfPassword,
  }),
  secretInputs: ["password"],
  async run({ attachment_id, pages, offset = 0, password }, ctx) {
    const range = parseRange(pages, "pages", MAX_PDF_PAGES);
    if (typeof range === "string") return { content: range, isError: true };
    const { found, error } = await open(ctx, attachment_id, ["pdf"]);
    if (error) return error;
    try {
      const out = await pdfFormat.read(found!.reader, {
        from: range[0],
        to: range[1],
        maxChars: PDF_READ_CHARS,
        skip: offset,
        password,
      });
      const first = out.pages[0];
      // Past the first page's end: refused, whatever the range. At its very end, a range goes on
      // with its next pages (a cut that fell at a page's end names that offset).
      if (offset && first && (offset > first.text.length || (offset === first.text.length && range[0] === range[1])))
        return {
          content: `offset: page ${first.page} has ${first.text.length} characters; offset ${offset} is past its end`,
          isError: true,
        };
      const shown = out.pages.map((p, i) =>
        i === 0 && offset ? { ...p, text: sliceWhole(p.text, offset, p.text.length) } : p,
      );
      const text = shown
        .map(
          (p, i) =>
            `--- page ${p.page} of ${found!.attachment.name}${i === 0 && offset ? ` (from character ${offset})` : ""}\n${p.text}`,
        )
        .join("\n\n");
      const last = out.pages.at(-1);
      const lastPage = last?.page ?? range[0];
      // Never cut short silently: the model is told where the text stopped and the call that reads
      // on, from inside the page when the cap fell in one.
      const readOn = {
        attachment_id,
        pages: lastPage < range[1] ? `${lastPage}-${range[1]}` : `${lastPage}`,
        ...(last?.text.length ? { offset: last.text.length } : {}),
      };
      const cut = out.truncated
        ? `\n\n[pdf_read: stopped at the ${PDF_READ_CHARS.toLocaleString("en-US")}-char cap in page ${lastPage}; read on with pdf_read ${JSON.stringify(readOn)}]`
        : "";
      return { content: text + cut };
    } catch (err) {
      return fail(err);
    }
  },
};

export const imageView: ToolDefinition<{ attachment_id: string }, AttachmentAccess> = {
  name: "image_view",
  core: false,
  capability: "image_view: look at an image attachment",
  description: "Look at an image attachment: returns the image itself. Use only when you need to see it.",
  input: z.strictObject({ attachment_id: attachmentId }),
  async run({ attachment_id }, ctx) {
    const { found, error } = await open(ctx, attachment_id, ["image"]);
    if (error) return error;
    const { attachment, reader } = found!;
    // The picture is never resized here: one the Messages API would refuse (over 5 MB of base64,
    // a side over 8000 px, bytes not of the declared type) comes back as a note, never as an
    // image that would fail this and every later request. (Over 20 images in a request with a side
    // over 2000 px among them, the oldest images are left out at request time and the newest kept:
    // core/request-limits.ts.)
    if (reader.size > MAX_MODEL_IMAGE_BYTES)
      return {
        content: `${attachment.name} is ${reader.size} bytes; images over ${MAX_MODEL_IMAGE_BYTES} bytes (5 MB once base64-encoded) cannot be viewed`,
        isError: true,
      };
    if (!(MODEL_IMAGE_TYPES as readonly string[]).includes(attachment.type))
      return { content: `${attachment.type} cannot be viewed; png, jpeg, gif and webp can`, isError: true };
    const bytes = await imageFormat.read(reader);
    const problem = modelImageProblem(attachment.type, bytes);
    if (problem) return { content: `${attachment.name} cannot be viewed: ${problem}`, isError: true };
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    const { width, height } = attachment.facts;
    const label =
      typeof width === "number" && typeof height === "number"
        ? `${attachment.name} (${width}x${height})`
        : attachment.name;
    return {
      content: label,
      blocks: [
        { type: "text", text: label },
        { type: "image", source: { type: "base64", media_type: attachment.type, data: btoa(bin) } },
      ],
    };
  },
};

export const spreadsheetRead: ToolDefinition<
  { attachment_id: string; rows: string; sheet?: string },
  AttachmentAccess & ToolAccess
> = {
  name: "spreadsheet_read",
  core: false,
  capability: "spreadsheet_read: rows of CSV, TSV and XLSX attachments",
  description: `Read a row range of a spreadsheet attachment (CSV, TSV or XLSX; "sheet" picks an XLSX sheet by name or number). At most ${MAX_ROWS} rows per call.`,
  input: z.strictObject({
    attachment_id: attachmentId,
    rows: z.string().max(40).describe('"1-50"'),
    sheet: z.string().max(100).optional(),
  }),
  async run({ attachment_id, rows, sheet }, ctx) {
    const range = parseRange(rows, "rows", MAX_ROWS);
    if (typeof range === "string") return { content: range, isError: true };
    const { found, error } = await open(ctx, attachment_id, ["spreadsheet"]);
    if (error) return error;
    const { attachment, reader } = found!;
    // Never cut short silently: past the cap the answer says where it stopped and names the call
    // that reads on (and, for a row longer than the cap, the call that shows the rest of it).
    const readOn = (next: number) =>
      next <= range[1]
        ? `read on with spreadsheet_read ${JSON.stringify({ attachment_id, rows: `${next}-${range[1]}`, ...(sheet === undefined ? {} : { sheet }) })}`
        : "";
    const note = (parts: string[]) =>
      parts.some(Boolean) ? `\n\n[spreadsheet_read: ${parts.filter(Boolean).join("; ")}]` : "";
    const cap = SHEET_READ_CHARS.toLocaleString("en-US");
    try {
      if (attachment.facts.sheets) {
        const which = sheet === undefined ? 1 : /^\d+$/.test(sheet) ? Number(sheet) : sheet;
        const out = await xlsxFormat.read(reader, {
          sheet: which,
          from: range[0],
          to: range[1],
          maxChars: SHEET_READ_CHARS,
        });
        // Like file_read and pdf_read: a range that starts past the end is an error naming the size.
        if (out.lastRow !== undefined && range[0] > out.lastRow)
          return {
            content: `rows: sheet "${out.sheet}" of ${attachment.name} has ${out.lastRow} rows; row ${range[0]} is past its end`,
            isError: true,
          };
        const shown = rowsWithin(out.rows, SHEET_READ_CHARS);
        const last = range[0] + shown.lines.length - 1;
        const more = shown.lines.length < out.rows.length || out.truncated;
        const tail = shown.rowCut
          ? note([`row ${last} is longer than the ${cap}-char cap and is cut there`, more ? readOn(last + 1) : ""])
          : more
            ? note([`stopped at the ${cap}-char cap after row ${last}`, readOn(last + 1)])
            : "";
        return {
          content: `[spreadsheet_read: ${attachment.name}, sheet ${out.sheet}, rows ${range[0]}-${last}]\n${shown.lines.join("\n")}${tail}`,
        };
      }
      const text = await found!.text();
      const delimiter = delimiterOf(attachment.type);
      const at = { index: text.index, delimiter };
      // The header first (no rows): the rows get what of the cap it leaves, in bytes, which their
      // text as shown (fields joined by tabs) never exceeds.
      const { header, totalRows } = await delimitedFormat.read(text.reader, {
        ...at,
        from: range[0],
        to: range[0] - 1,
      });
      if (range[0] > totalRows)
        return {
          content: `rows: ${attachment.name} has ${totalRows} rows after its header; row ${range[0]} is past the end`,
          isError: true,
        };
      const headerLine = header.join("\t");
      const headerCut = headerLine.length > SHEET_READ_CHARS / 2;
      const headerShown = headerCut ? sliceWhole(headerLine, 0, SHEET_READ_CHARS / 2) : headerLine;
      const out = await delimitedFormat.read(text.reader, {
        ...at,
        from: range[0],
        to: range[1],
        maxBytes: SHEET_READ_CHARS - headerShown.length - 1,
      });
      // Whole rows only, unless the first one alone is over the cap: it is cut, and file_read shows the rest.
      const rowCut = out.cutAtByte !== undefined && out.rows.length === 1;
      const shownRows = out.cutAtByte !== undefined && !rowCut ? out.rows.slice(0, -1) : out.rows;
      const last = range[0] + shownRows.length - 1;
      const lastRow = Math.min(range[1], out.totalRows);
      const tail = note([
        headerCut
          ? `the header row is cut at ${(SHEET_READ_CHARS / 2).toLocaleString("en-US")} chars; all of it: ${activated(ctx, `file_read ${JSON.stringify({ attachment_id, lines: "1" })}`)}`
          : "",
        rowCut
          ? `row ${last} is longer than the ${cap}-char cap and is cut there; the rest of it: ${activated(ctx, `file_read ${JSON.stringify({ attachment_id, lines: String(last + 1), offset: out.cutAtByte })}`)}`
          : out.truncated
            ? `stopped at the ${cap}-char cap after row ${last}`
            : "",
        out.truncated && last < lastRow ? readOn(last + 1) : "",
      ]);
      return {
        content: `[spreadsheet_read: ${attachment.name}, rows ${range[0]}-${last}]\n${[headerShown, ...shownRows.map((r) => r.join("\t"))].join("\n")}${tail}`,
      };
    } catch (err) {
      return fail(err);
    }
  },
};

/** A call of file_read, preceded by the tool_activate it needs when the conversation has not activated it. */
const activated = (ctx: ToolAccess, call: string) =>
  ctx.activeTools.includes("file_read") ? call : `tool_activate {"name":"file_read"}, then ${call}`;

type Cell = string | number | boolean | null;

/**
 * Rows as tab-separated lines, whole rows while their text (lines joined by newlines) stays within
 * `budget` characters; a first row alone over it is cut at a whole character (`rowCut`).
 */
function rowsWithin(rows: readonly (readonly Cell[])[], budget: number): { lines: string[]; rowCut: boolean } {
  const lines: string[] = [];
  let used = 0;
  for (const row of rows) {
    const sep = lines.length ? 1 : 0;
    const line = rowText(row, budget - used - sep);
    if (used + sep + line.length <= budget) {
      lines.push(line);
      used += sep + line.length;
      continue;
    }
    if (lines.length === 0) return { lines: [sliceWhole(line, 0, budget)], rowCut: true };
    break;
  }
  return { lines, rowCut: false };
}

/** A row's cells joined by tabs, built only until it is past `limit` characters. */
function rowText(row: readonly Cell[], limit: number): string {
  let out = "";
  for (let i = 0; i < row.length && out.length <= limit; i++) {
    if (i > 0) out += "\t";
    const v = row[i];
    if (v !== null) out += String(v);
  }
  return out;
}

export const documentRead: ToolDefinition<{ attachment_id: string; offset?: number }, AttachmentAccess> = {
  name: "document_read",
  core: false,
  capability: "document_read: the text of DOCX attachments",
  description: `Read the text of a DOCX attachment, ${DOC_PAGE_CHARS} characters per call from offset.`,
  input: z.strictObject({ attachment_id: attachmentId, offset: z.number().int().min(0).optional() }),
  async run({ attachment_id, offset }, ctx) {
    const { found, error } = await open(ctx, attachment_id, ["document"]);
    if (error) return error;
    try {
      const start = offset ?? 0;
      // The text from `start` only: one char past the page says whether there is more.
      const doc = await docxFormat.read(found!.reader, { maxChars: start + DOC_PAGE_CHARS + 1, fromChar: start });
      // A page ends at a whole character (one char shorter when its boundary would split a
      // surrogate pair), and the next page starts there: no character is lost between two pages.
      // An offset the caller chose inside a pair leaves U+FFFD, never half a pair.
      const page = sliceWhole(doc.text, 0, DOC_PAGE_CHARS).toWellFormed();
      // Like file_read and pdf_read: a start past the end is an error naming the size (the text
      // up to `start` is all there is, so reading that much measures it).
      if (!page && start > 0) {
        const { length } = (await docxFormat.read(found!.reader, { maxChars: start })).text;
        const range = length ? ` (read from offset 0 to ${length - 1})` : "";
        return {
          content: `document_read: ${found!.attachment.name} has ${length} characters of text; offset ${start} is past its end${range}`,
          isError: true,
        };
      }
      const more =
        doc.text.length > page.length
          ? `; next: document_read {"attachment_id":"${attachment_id}","offset":${start + page.length}}`
          : "";
      return {
        content: `[document_read: ${found!.attachment.name}, chars ${start}-${start + page.length}${more}]\n${page}`,
      };
    } catch (err) {
      return fail(err);
    }
  },
};
