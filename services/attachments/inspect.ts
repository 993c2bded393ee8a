// What an uploaded attachment is, from its own bytes, through ranged reads only: the type from
// magic bytes, then the facts its note states (PDF pages from the cross-reference data, image
// dimensions from the header, spreadsheet sheets and rows, text lines from the line index).
import { docxText } from "./formats/document/docx";
import { delimitedInfo } from "./formats/spreadsheet/delimited";
import { imageInfoFromReader, sniffType } from "./formats/image/image-info";
import { isProbablyText, LineIndexer, type LineIndex } from "./formats/text/line-index";
import type { AttachmentFacts } from "./note";
import { probePdf } from "./formats/pdf/read";
import type { RangeReader } from "./formats/shared/range-reader";
import { xlsxInfo } from "./formats/spreadsheet/xlsx";
import { attachmentLineIndexKey } from "../../r2-layout";

const HEAD_BYTES = 8 * 1024;
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

export async function inspectAttachment(
  reader: RangeReader,
  opts: { name: string; declaredType: string | null; lineIndex: () => Promise<LineIndex> },
): Promise<{ type: string; facts: AttachmentFacts }> {
  const head = await reader.read(0, HEAD_BYTES);
  const type = sniffType(head, opts.name, opts.declaredType);
  try {
    if (type === "application/pdf") {
      const info = await probePdf(reader);
      const pw = info.passwordRequired ? { passwordRequired: true } : {};
      return { type, facts: { kind: "pdf", pageCount: info.pageCount, pageCountSource: info.pageCountSource, pdfTitle: info.title, encrypted: info.encrypted, ...pw } };
    }
    if (type.startsWith("image/")) {
      const img = await imageInfoFromReader(reader);
      return { type, facts: img ? { kind: "image", width: img.width, height: img.height, format: img.format } : { kind: "image", problem: "unrecognised image header" } };
    }
    if (type === XLSX) return { type, facts: { kind: "spreadsheet", sheets: (await xlsxInfo(reader)).sheets } };
    if (type === DOCX) return { type, facts: { kind: "document", paragraphs: (await docxText(reader, { maxChars: 1 })).paragraphs } };
    if (type === "text/csv" || type === "text/tab-separated-values") {
      const index = await opts.lineIndex();
      const info = await delimitedInfo(reader, index, type === "text/csv" ? "," : "\t");
      return { type, facts: { kind: "spreadsheet", columns: info.columns, rows: info.rows, lines: index.lines } };
    }
    if (type.startsWith("text/") || type === "application/json" || isProbablyText(head)) {
      const index = await opts.lineIndex();
      return { type: type === "application/octet-stream" ? "text/plain" : type, facts: { kind: "text", lines: index.lines } };
    }
    return { type, facts: { kind: "binary" } };
  } catch (err) {
    // A corrupt file still gets a note: it says what could not be established.
    const kind: AttachmentFacts["kind"] = type === "application/pdf" ? "pdf" : type.startsWith("image/") ? "image" : type === XLSX ? "spreadsheet" : type === DOCX ? "document" : "binary";
    return { type, facts: { kind, problem: err instanceof Error ? err.message : String(err) } };
  }
}

/** Streams an object once through the line indexer and stores the index next to it. */
export async function buildLineIndex(bucket: R2Bucket, tenantId: string, attachmentId: string, blobKey: string): Promise<LineIndex> {
  const obj = await bucket.get(blobKey);
  if (!obj) throw new Error("the attachment's bytes are gone");
  const indexer = new LineIndexer();
  for await (const chunk of obj.body as unknown as AsyncIterable<Uint8Array>) indexer.push(chunk);
  const index = indexer.finish();
  await bucket.put(attachmentLineIndexKey(tenantId, attachmentId), JSON.stringify(index), { httpMetadata: { contentType: "application/json" } });
  return index;
}

/** The stored line index, built on first use when the upload did not produce one. */
export async function lineIndexFor(bucket: R2Bucket, tenantId: string, attachmentId: string, blobKey: string): Promise<LineIndex> {
  const stored = await bucket.get(attachmentLineIndexKey(tenantId, attachmentId));
  if (stored) return (await stored.json()) as LineIndex;
  return buildLineIndex(bucket, tenantId, attachmentId, blobKey);
}
