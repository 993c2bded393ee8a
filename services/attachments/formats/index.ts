// The registry of attachment formats, in detection order: the first whose `detect` accepts an
// upload reads it, and an upload no format accepts is stored as plain bytes ("binary"). Adding a
// format is its folder plus one line here.
import { docxFormat } from "./document";
import type { AttachmentFormat, FormatFacts, Sample } from "./format";
import { imageFormat } from "./image";
import { pdfFormat } from "./pdf";
import { delimitedFormat, xlsxFormat } from "./spreadsheet";
import { textFormat } from "./text";

export const FORMATS = [pdfFormat, imageFormat, xlsxFormat, docxFormat, delimitedFormat, textFormat] as const;

/** What stored facts and notes call an attachment: a format's kind, or bytes no tool reads. */
export type AttachmentKind = (typeof FORMATS)[number]["kind"] | "binary";

export interface AttachmentFacts extends FormatFacts {
  kind: AttachmentKind;
}

export function detectFormat(sample: Sample): AttachmentFormat<AttachmentKind> | null {
  return FORMATS.find((f) => f.detect(sample)) ?? null;
}

/**
 * The formats to try, in order: those whose weaker sign matched (`detectIfReadable`, kept only if
 * their probe succeeds), then the first that detects the upload outright.
 */
export function candidateFormats(sample: Sample): { format: AttachmentFormat<AttachmentKind>; tentative: boolean }[] {
  const out: { format: AttachmentFormat<AttachmentKind>; tentative: boolean }[] = [];
  for (const f of FORMATS as readonly AttachmentFormat<AttachmentKind>[]) {
    if (f.detect(sample)) return [...out, { format: f, tentative: false }];
    if (f.detectIfReadable?.(sample)) out.push({ format: f, tentative: true });
  }
  return out;
}

/** The format that writes the note for a kind (formats sharing a kind share their note). */
export function formatOfKind(kind: string): AttachmentFormat<AttachmentKind> | null {
  return FORMATS.find((f) => f.kind === kind) ?? null;
}

const tools: Partial<Record<AttachmentKind, string[]>> = { binary: [] };
for (const f of FORMATS) tools[f.kind] = [...new Set([...(tools[f.kind] ?? []), ...f.tools])];
/** Tools that read each kind of attachment; uploading one activates them in its conversation. */
export const TOOLS_FOR = tools as Record<AttachmentKind, string[]>; // every kind comes from FORMATS
