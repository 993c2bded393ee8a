/**
 * PDF facts and page text through ranged reads only, so a multi-hundred-megabyte attachment in R2
 * is never loaded whole into a 128 MB Worker.
 *
 * `probePdf` reads the tail (`startxref`), the cross-reference chain (classic tables read lazily,
 * cross-reference streams, `/Prev` updates with the newest entry winning) and then only the
 * catalog, the root /Pages node and /Info. `readPdfPages` walks the page tree by /Count to the
 * requested pages and extracts their text. Objects in compressed object streams are supported.
 *
 * Supported: FlateDecode (also LZW, ASCIIHex, ASCII85, RunLength) with PNG and TIFF predictors;
 * simple fonts through WinAnsi/Standard/MacRoman encodings and /Differences; /ToUnicode CMaps
 * (bfchar, bfrange) for any font, including Type0/Identity-H; form XObjects. Lines and word
 * spaces come from text positions (see pdf-text.ts). Not supported: decryption (an encrypted
 * file reports `encrypted: true`; its text is refused), image-only filters (DCT, JPX, JBIG2,
 * CCITT) in content, CJK predefined CMaps other than UCS-2/UTF-16 when a font lacks /ToUnicode,
 * rebuilding a broken cross-reference table by scanning the file (that would read it whole).
 *
 * Every failure is a `PdfError` with a readable message; loops and reads are bounded.
 */
import { PdfDocument, RangeReadError } from "./pdf-document";
import { decodeTextString } from "./pdf-encodings";
import { isName, PdfError, PdfString } from "./pdf-objects";
import { extractPageText, type TextContext } from "./pdf-text";
import type { RangeReader } from "./range-reader";

export { PdfError } from "./pdf-objects";

export interface PdfInfo {
  /** Pages per the root /Pages /Count; 0 when the file is encrypted and the count is unreadable. */
  pageCount: number;
  /** From the %PDF- header, or the catalog's /Version when that is newer. */
  version: string | null;
  encrypted: boolean;
  /** Document info strings; null when absent or encrypted. */
  title: string | null;
  author: string | null;
  producer: string | null;
  /** Bytes this call read from the reader. */
  bytesRead: number;
}

export interface PdfPagesResult {
  pages: { page: number; text: string }[];
  /** True when `maxChars` cut the text short (the last page returned is partial). */
  truncated: boolean;
  bytesRead: number;
}

export async function probePdf(reader: RangeReader): Promise<PdfInfo> {
  const doc = await guard(() => PdfDocument.open(reader));
  return guard(async () => {
    let pageCount = 0;
    let version = doc.version;
    try {
      const catalog = await doc.catalog();
      const v = await doc.resolve(catalog.get("Version"));
      if (isName(v) && /^\d+\.\d+$/.test(v.name) && (version === null || Number(v.name) > Number(version))) version = v.name;
      pageCount = (await doc.pagesRoot()).count;
    } catch (err) {
      // Encrypted files keep their catalog in encrypted object streams; say "encrypted", not "broken".
      if (!doc.encrypted || !(err instanceof PdfError)) throw err;
    }
    let title: string | null = null;
    let author: string | null = null;
    let producer: string | null = null;
    if (!doc.encrypted) {
      const info = await doc.resolveDict(doc.trailer.get("Info")).catch((err: unknown) => {
        if (err instanceof PdfError) return null; // damaged /Info: the facts stay unknown
        throw err;
      });
      const text = async (key: string) => {
        const v = await doc.resolve(info?.get(key));
        if (!(v instanceof PdfString)) return null;
        const s = decodeTextString(v.bytes).replace(/\u0000/g, "").trim();
        return s || null;
      };
      if (info) {
        title = await text("Title");
        author = await text("Author");
        producer = await text("Producer");
      }
    }
    return { pageCount, version, encrypted: doc.encrypted, title, author, producer, bytesRead: doc.bytesRead };
  });
}

export async function readPdfPages(reader: RangeReader, from: number, to: number, opts: { maxChars?: number } = {}): Promise<PdfPagesResult> {
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < from) {
    throw new PdfError(`invalid page range ${from}-${to}: pages are numbered from 1 and the range must not run backwards`);
  }
  const doc = await guard(() => PdfDocument.open(reader));
  return guard(async () => {
    if (doc.encrypted) throw new PdfError("the PDF is encrypted");
    const { node: root, count } = await doc.pagesRoot();
    const plural = count === 1 ? "page" : "pages";
    if (from > count) throw new PdfError(`page ${from} is past the end: the document has ${count} ${plural}`);
    if (to > count) throw new PdfError(`page ${to} is past the end: the document has ${count} ${plural}`);
    let budget = opts.maxChars ?? Number.POSITIVE_INFINITY;
    const ctx: TextContext = { fonts: new Map() };
    const pages: { page: number; text: string }[] = [];
    let truncated = false;
    for (let p = from; p <= to; p++) {
      if (budget <= 0) {
        truncated = true;
        break;
      }
      const leaf = await doc.findPage(p - 1, root);
      const out = await extractPageText(doc, leaf, ctx, budget);
      pages.push({ page: p, text: out.text });
      budget -= out.text.length;
      if (out.truncated) {
        truncated = true;
        break;
      }
    }
    return { pages, truncated, bytesRead: doc.bytesRead };
  });
}

/**
 * Turns a TypeError/RangeError (a bug tripped by odd input, or stack exhaustion) into a PdfError;
 * failures of the reader itself surface as their original error.
 */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof PdfError) throw err;
    if (err instanceof RangeReadError) throw err.cause;
    if (err instanceof RangeError || err instanceof TypeError) {
      throw new PdfError(`damaged PDF: ${err.message}`, { cause: err });
    }
    throw err;
  }
}
