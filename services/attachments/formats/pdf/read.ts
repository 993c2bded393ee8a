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
 * spaces come from text positions (see text.ts).
 *
 * What the own reader cannot do goes to pdf.js (pdfjs.ts) over the same ranged reads: a file
 * whose cross-reference data or page tree it cannot read (pdf.js rebuilds the xref by scanning),
 * encrypted files (the empty user password, or `password`), and pages whose fonts it cannot map
 * to text. `pageCountSource` says which reader found the count. What it refuses as too large
 * (PdfTooLarge: a stream decoding past its limit, 16 MB for a page's content) never goes to
 * pdf.js, which would decode all of it with no limit: the page, or the file, is an error.
 *
 * Every failure is a `PdfError` with a readable message; loops and reads are bounded.
 */
import { PdfDocument } from "./document";
import { decodeTextString } from "./encodings";
import { RangeReadError } from "./object-reader";
import { isName, PdfError, PdfString, PdfTooLarge } from "./objects";
import { NEEDS_PASSWORD, openWithPdfjs, PdfReadFailed, type PdfjsDocument } from "./pdfjs";
import { extractPageText, type TextContext } from "./text";
import type { RangeReader } from "../shared/range-reader";
import { sliceWhole } from "../../../../core/text-cut";

export { PdfError, PdfTooLarge } from "./objects";
export { NEEDS_PASSWORD, usePdfjsCMaps, WRONG_PASSWORD } from "./pdfjs";

export interface PdfInfo {
  /** Pages per the root /Pages /Count, or per pdf.js when the own reader could not find it. */
  pageCount: number;
  /** "xref": the file's own cross-reference data; "pdfjs": pdf.js (recovered or decrypted). */
  pageCountSource: "xref" | "pdfjs";
  /** True when the file opens only with a user password that was not given (or was wrong). */
  passwordRequired: boolean;
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

type OwnInfo = Omit<PdfInfo, "pageCountSource" | "passwordRequired">;

/**
 * The page count from the file's own index; pdf.js when that cannot be read or the file is
 * encrypted (to learn whether the empty user password opens it, and the count when the catalog
 * sits in an encrypted object stream). A file that needs a password is reported, never guessed.
 */
export async function probePdf(source: RangeReader, opts: { password?: string } = {}): Promise<PdfInfo> {
  const reader = counting(source);
  const countBytes = (r: typeof reader) => r.bytesRead;
  let own: OwnInfo;
  try {
    own = await probeOwn(reader);
  } catch (err) {
    if (!(err instanceof PdfError) || notPdf(err) || err instanceof PdfTooLarge) throw err;
    const pdfjs = await openOrExplain(reader, opts.password, err);
    if (pdfjs === "password")
      return {
        pageCount: 0,
        pageCountSource: "pdfjs",
        passwordRequired: true,
        version: null,
        encrypted: true,
        title: null,
        author: null,
        producer: null,
        bytesRead: countBytes(reader),
      };
    try {
      return {
        pageCount: pdfjs.pageCount,
        pageCountSource: "pdfjs",
        passwordRequired: false,
        version: null,
        encrypted: false,
        title: pdfjs.title,
        author: pdfjs.author,
        producer: pdfjs.producer,
        bytesRead: countBytes(reader),
      };
    } finally {
      await pdfjs.close();
    }
  }
  if (!own.encrypted) return { ...own, pageCountSource: "xref", passwordRequired: false };
  const pdfjs = await openOrExplain(reader, opts.password, null);
  // The /Count integer is not encrypted: what the xref gave stands (0 when the catalog sits in an
  // encrypted object stream), and the password is asked for.
  if (pdfjs === "password")
    return { ...own, pageCountSource: "xref", passwordRequired: true, bytesRead: countBytes(reader) };
  try {
    const fromXref = own.pageCount > 0 && own.pageCount === pdfjs.pageCount;
    return {
      ...own,
      pageCount: pdfjs.pageCount,
      pageCountSource: fromXref ? "xref" : "pdfjs",
      passwordRequired: false,
      title: pdfjs.title,
      author: pdfjs.author,
      producer: pdfjs.producer,
      bytesRead: countBytes(reader),
    };
  } finally {
    await pdfjs.close();
  }
}

/**
 * pdf.js's document, or "password" when it needs one; when pdf.js fails too, the own reader's
 * error (`ownError`) is the one worth reporting.
 */
async function openOrExplain(
  reader: RangeReader,
  password: string | undefined,
  ownError: PdfError | null,
): Promise<PdfjsDocument | "password"> {
  try {
    return await openWithPdfjs(reader, { password });
  } catch (err) {
    if (err instanceof PdfError && err.message.startsWith("encrypted")) {
      if (password === undefined) return "password";
      throw err;
    }
    // A read that failed says why nothing could be read; the own reader's complaint would not.
    throw err instanceof PdfReadFailed ? err : (ownError ?? err);
  }
}

/** No %PDF- header and no PDF tail: pdf.js would scan the whole of it for nothing. */
const notPdf = (err: PdfError) => err.message.startsWith("not a PDF");

/** A reader that counts what both readers fetch through it. */
function counting(reader: RangeReader): RangeReader & { bytesRead: number } {
  const counted = {
    size: reader.size,
    bytesRead: 0,
    async read(offset: number, length: number) {
      const bytes = await reader.read(offset, length);
      counted.bytesRead += bytes.length;
      return bytes;
    },
  };
  return counted;
}

async function probeOwn(reader: RangeReader): Promise<OwnInfo> {
  const doc = await guard(() => PdfDocument.open(reader));
  return guard(async () => {
    let pageCount = 0;
    let version = doc.version;
    try {
      const catalog = await doc.catalog();
      const v = await doc.resolve(catalog.get("Version"));
      if (isName(v) && /^\d+\.\d+$/.test(v.name) && (version === null || Number(v.name) > Number(version)))
        version = v.name;
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
        const s = decodeTextString(v.bytes)
          // biome-ignore lint/suspicious/noControlCharactersInRegex: PDF text strings may carry NULs, which are removed
          .replace(/\u0000/g, "")
          .trim();
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

export async function readPdfPages(
  source: RangeReader,
  {
    from,
    to,
    maxChars,
    skip = 0,
    password,
    skipUnreadable,
  }: {
    from: number;
    to: number;
    maxChars?: number;
    /**
     * Characters of the first page the caller leaves out (pdf_read's `offset`): read, but not
     * counted against `maxChars`. A first page that ends before them is returned alone.
     */
    skip?: number;
    password?: string;
    /** A page neither reader can read is given as empty text instead of failing the range (the search index's chunks). */
    skipUnreadable?: boolean;
  },
): Promise<PdfPagesResult> {
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < from) {
    throw new PdfError(
      `invalid page range ${from}-${to}: pages are numbered from 1 and the range must not run backwards`,
    );
  }
  const reader = counting(source);
  let pdfjs: PdfjsDocument | null = null;
  const viaPdfjs = async (ownError: PdfError | null) => {
    if (pdfjs) return pdfjs;
    const opened = await openOrExplain(reader, password, ownError);
    if (opened === "password") throw new PdfError(NEEDS_PASSWORD);
    return (pdfjs = opened);
  };
  try {
    let doc: PdfDocument | null = null;
    let count: number;
    let root: Awaited<ReturnType<PdfDocument["pagesRoot"]>>["node"] | null = null;
    try {
      doc = await guard(() => PdfDocument.open(reader));
      if (doc.encrypted) doc = null;
      else ({ node: root, count } = await guard(() => doc!.pagesRoot()));
    } catch (err) {
      if (!(err instanceof PdfError) || notPdf(err) || err instanceof PdfTooLarge) throw err;
      doc = null;
      count = (await viaPdfjs(err)).pageCount;
    }
    if (!doc) count = (await viaPdfjs(null)).pageCount;
    const plural = count! === 1 ? "page" : "pages";
    if (from > count!) throw new PdfError(`page ${from} is past the end: the document has ${count!} ${plural}`);
    if (to > count!) throw new PdfError(`page ${to} is past the end: the document has ${count!} ${plural}`);
    let budget = maxChars ?? Number.POSITIVE_INFINITY;
    const ctx: TextContext = { fonts: new Map() };
    const pages: { page: number; text: string }[] = [];
    let truncated = false;
    for (let p = from; p <= to; p++) {
      if (budget <= 0) {
        truncated = true;
        break;
      }
      const skipped = p === from ? skip : 0;
      const cap = budget + skipped;
      let text: string | null = null;
      // The own reader's words of a page it reads only in part: kept for when pdf.js cannot read it.
      let partial: string | null = null;
      if (doc && root) {
        try {
          const leaf = await guard(() => doc!.findPage(p - 1, root!));
          const out = await guard(() => extractPageText(doc!, { leaf, ctx, maxChars: cap }));
          // A glyph it cannot map (CJK CMaps, Type3 glyph names) or maps by a guess (a font
          // program's built-in encoding or cmap) makes the page pdf.js's, which reads font
          // programs: on the corpus any share above 0 loses words (0.2: 93.2%, 0: 94.6% of files
          // at word-F1 >= 0.9) for about 0.3 ms more per file at the median. The counts cover the
          // whole page whatever the cap (text.ts), so a capped read, its read-on at a larger cap
          // and the search index's uncapped read all take the page from the same reader.
          if (out.unmapped + out.guessed === 0) text = out.text;
          else partial = out.text;
          if (text !== null && out.truncated) {
            pages.push({ page: p, text });
            truncated = true;
            break;
          }
        } catch (err) {
          if (!(err instanceof PdfError)) throw err;
          // Too large for the own reader is too large for pdf.js, which has no limit at all: an
          // error naming the page (other pages still read), or an empty page for the index.
          if (err instanceof PdfTooLarge) {
            if (!skipUnreadable)
              throw new PdfTooLarge(
                `page ${p} is too large to read: ${err.message}; read the pages around it on their own`,
                err.limit,
              );
            text = "";
          }
        }
      }
      if (text === null) {
        try {
          text = await (await viaPdfjs(null)).pageText(p);
        } catch (err) {
          // pdf.js cannot read it either (a file over its size limit, a page it refuses): the own
          // reader's words where it had some, else an empty page when the caller skips such pages.
          // A failed read (the file gone mid-read) is never a page to skip.
          if (!(err instanceof PdfError) || err.message === NEEDS_PASSWORD || err instanceof PdfReadFailed) throw err;
          if (partial !== null) text = partial;
          else if (skipUnreadable) text = "";
          else throw err;
        }
        if (text.length > cap) {
          text = sliceWhole(text, 0, cap);
          truncated = true;
        }
      }
      pages.push({ page: p, text });
      if (text.length < skipped) break;
      budget -= text.length - skipped;
      if (truncated) break;
    }
    return { pages, truncated, bytesRead: reader.bytesRead };
  } finally {
    await (pdfjs as PdfjsDocument | null)?.close();
  }
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
