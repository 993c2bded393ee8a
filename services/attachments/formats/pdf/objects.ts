/**
 * The PDF object model (ISO 32000-1 §7.3): names, references, strings, dictionaries, streams and
 * bare keywords, plus the reader's errors. Lexing is lexer.ts, parsing parser.ts.
 */

/** Every failure of the PDF reader: not a PDF, damaged structure, unsupported feature. */
export class PdfError extends Error {
  override readonly name = "PdfError";
}

/**
 * A stream decodes to more than the reader takes (`limit` bytes): a small compressed stream can
 * expand a thousandfold. Final: what the own reader refuses for size is never handed to pdf.js,
 * which would decode all of it with no limit in a Worker's 128 MB.
 */
export class PdfTooLarge extends PdfError {
  constructor(
    message: string,
    readonly limit: number,
  ) {
    super(message);
  }
}

/** Internal: the buffer ended inside a token or object; read more bytes and parse again. */
export class NeedMoreData extends Error {
  override readonly name = "NeedMoreData";
}

export class PdfName {
  constructor(readonly name: string) {}
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}

export class PdfString {
  constructor(readonly bytes: Uint8Array) {}
}

export class PdfDict {
  constructor(readonly map: Map<string, PdfObj> = new Map()) {}
  get(key: string): PdfObj | undefined {
    return this.map.get(key);
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
}

export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    /** Still-encoded stream bytes, when already read. */
    public raw: Uint8Array | null,
    /** Reads the encoded bytes on demand (so a stream's dictionary can be looked at cheaply). */
    readonly loader: (() => Promise<Uint8Array>) | null = null,
  ) {}
}

/** A bare keyword; only content-stream operators and structural words surface as these. */
export class PdfKeyword {
  constructor(readonly word: string) {}
}

export type PdfObj = null | boolean | number | PdfName | PdfString | PdfRef | PdfDict | PdfStream | PdfObj[];

/**
 * What the page tree and geometry ask of an open document: references resolved, the trailer, read-ahead.
 * PdfDocument (document.ts) implements it; naming it here keeps those files from importing the document.
 */
export interface PdfResolver {
  readonly trailer: PdfDict;
  /** Most objects one prefetch reads ahead. */
  readonly prefetchMax: number;
  resolve(o: PdfObj | undefined): Promise<PdfObj>;
  resolveDict(o: PdfObj | undefined): Promise<PdfDict | null>;
  prefetch(refs: PdfObj[]): Promise<void>;
}

/** What object streams ask of an open document: objects by reference and a stream's encoded bytes. */
export interface PdfObjectFetcher {
  readonly encrypted: boolean;
  fetch(ref: PdfRef): Promise<PdfObj>;
  rawBytes(s: PdfStream): Promise<Uint8Array>;
}

export function isName(o: PdfObj | undefined, name?: string): o is PdfName {
  return o instanceof PdfName && (name === undefined || o.name === name);
}

export function isInt(o: unknown): o is number {
  return typeof o === "number" && Number.isInteger(o);
}
