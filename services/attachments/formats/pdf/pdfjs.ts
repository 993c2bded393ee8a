/**
 * pdf.js (through unpdf's serverless build) as the fallback reader, for what the own reader in
 * read.ts cannot do: damaged cross-reference data it would have to rebuild by scanning, encrypted
 * files (pdf.js decrypts RC4 and AES with the empty user password, or a given one), and fonts the
 * own extractor cannot map (predefined CJK CMaps, Type3 with private glyph names).
 *
 * pdf.js reads through a range transport over the same RangeReader with auto-fetch and streaming
 * off, so it fetches only the chunks it needs. It does keep one buffer the size of the file, so it
 * is refused for files over PDFJS_MAX_BYTES (a Worker has 128 MB). pdf.js is imported on first
 * use: a deployment that never meets a hard PDF never evaluates it.
 */
import { PdfError } from "./objects";
import type { RangeReader } from "../shared/range-reader";

/** Largest file the fallback takes: pdf.js allocates the file's length up front. */
export const PDFJS_MAX_BYTES = 48 * 1024 * 1024;
const CHUNK = 64 * 1024;

export interface PdfjsDocument {
  pageCount: number;
  title: string | null;
  author: string | null;
  producer: string | null;
  pageText(page: number): Promise<string>;
  close(): Promise<void>;
}

/**
 * A ranged read failed under pdf.js (the attachment was deleted mid-read, R2 failed): what was
 * waiting on it is rejected with this, naming the cause. Never a page to skip: the file is unreadable.
 */
export class PdfReadFailed extends PdfError {}

/** pdf.js's messages for the two password cases, as a reader of the note should see them. */
export const NEEDS_PASSWORD = "encrypted; ask the user for the password";
export const WRONG_PASSWORD = "encrypted, and the password given is wrong; ask the user for the password";

/**
 * Where pdf.js gets predefined CMaps (`fetch({ filename })` -> bytes of a packed .bcmap). Unset,
 * fonts that need one yield no text through pdf.js.
 */
let cmapSource: (new () => { fetch(req: { kind: string; filename: string }): Promise<Uint8Array> }) | null = null;
export function usePdfjsCMaps(source: typeof cmapSource): void {
  cmapSource = source;
}

type PdfjsModule = typeof import("unpdf/pdfjs");
let pdfjsModule: Promise<PdfjsModule> | null = null;

async function loadPdfjs(): Promise<PdfjsModule> {
  // pdf.js reads DOMMatrix at module load; text extraction never uses it, so a bare stand-in does.
  const g = globalThis as { DOMMatrix?: unknown };
  if (g.DOMMatrix === undefined) g.DOMMatrix = class {};
  pdfjsModule ??= import("unpdf/pdfjs");
  return pdfjsModule;
}

export async function openWithPdfjs(reader: RangeReader, opts: { password?: string } = {}): Promise<PdfjsDocument> {
  if (reader.size > PDFJS_MAX_BYTES) {
    throw new PdfError(
      `the PDF's cross-reference data is damaged and the file (${reader.size} bytes) is too large to recover (limit ${PDFJS_MAX_BYTES} bytes)`,
    );
  }
  const pdfjs = await loadPdfjs();
  // pdf.js waits for every range it asked for, and unpdf's build leaves abort() empty: a read that
  // fails would leave it waiting forever. So a failed read destroys the loading task and rejects
  // whatever waits on pdf.js (opening, a page, its text), now and later, with the cause.
  let failure: PdfReadFailed | null = null;
  let rejectAll: (err: PdfReadFailed) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    rejectAll = reject;
  });
  failed.catch(() => {}); // observed through guarded(), never unhandled
  const guarded = <T>(work: Promise<T>): Promise<T> => Promise.race([work, failed]);
  const readFailed = (err: unknown) => {
    if (failure) return;
    failure = new PdfReadFailed(`reading the file failed: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
    rejectAll(failure);
    task.destroy().catch(() => {});
  };
  class ReaderTransport extends pdfjs.PDFDataRangeTransport {
    override requestDataRange(begin: number, end: number): void {
      if (failure) return;
      reader.read(begin, end - begin).then(
        (bytes) => !failure && this.onDataRange(begin, bytes),
        (err: unknown) => readFailed(err),
      );
    }
  }
  const task = pdfjs.getDocument({
    range: new ReaderTransport(reader.size, null),
    rangeChunkSize: CHUNK,
    disableAutoFetch: true,
    disableStream: true,
    password: opts.password,
    useWasm: false,
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: 0,
    ...(cmapSource ? { BinaryDataFactory: cmapSource } : {}),
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await guarded(task.promise);
  } catch (err) {
    await task.destroy().catch(() => {});
    if (err instanceof PdfReadFailed) throw err;
    const e = err as { name?: string; code?: number; message?: string };
    if (e?.name === "PasswordException")
      throw new PdfError(e.code === 2 ? WRONG_PASSWORD : NEEDS_PASSWORD, { cause: err });
    throw new PdfError(`pdf.js cannot open it either: ${e?.message ?? String(err)}`, { cause: err });
  }
  const meta = await guarded(doc.getMetadata()).catch((err: unknown) => {
    if (err instanceof PdfReadFailed) throw err;
    return null;
  });
  const info = (meta?.info ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);
  return {
    pageCount: doc.numPages,
    title: str(info.Title),
    author: str(info.Author),
    producer: str(info.Producer),
    async pageText(page) {
      try {
        const content = await guarded((await guarded(doc.getPage(page))).getTextContent());
        return content.items
          .map((i) => ("str" in i ? i.str + (i.hasEOL ? "\n" : "") : ""))
          .join("")
          .replace(/[ \t]+\n/g, "\n")
          .trim();
      } catch (err) {
        if (err instanceof PdfReadFailed) throw err;
        throw new PdfError(`page ${page}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    },
    // After a failed read the task is already being destroyed; waiting on that could wait on pdf.js.
    close: () => (failure ? Promise.resolve() : task.destroy()),
  };
}
