// Reads a PDF's bytes and indirect objects through bounded windows at file offsets: a window grows
// only while the object is larger, and stream data is read when first needed.
import { indexOf, latin1 } from "./bytes";
import { Lexer } from "./lexer";
import { isInt, NeedMoreData, type PdfDict, PdfError, type PdfObj, PdfRef, PdfStream } from "./objects";
import { parseIndirectHeader } from "./parser";
import { concatBytes } from "../shared/bytes";
import type { RangeReader } from "../shared/range-reader";

const MAX_OBJECT_BYTES = 8 * 1024 * 1024;
const MAX_STREAM_BYTES = 32 * 1024 * 1024;

/** A failure of the underlying reader (storage, network): not a property of the PDF. */
export class RangeReadError extends Error {
  override readonly name = "RangeReadError";
  constructor(cause: unknown) {
    super(`reading the file failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface IndirectObject {
  value: PdfObj;
  stream: PdfStream | null;
}

export class ObjectReader {
  bytesRead = 0;
  readonly size: number;
  /** First windows of objects read ahead (or already in hand), by file offset. */
  private prefetched = new Map<number, Promise<Uint8Array>>();

  constructor(private readonly reader: RangeReader) {
    this.size = reader.size;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const start = Math.max(0, Math.min(this.size, offset));
    const len = Math.max(0, Math.min(this.size - start, length));
    if (len === 0) return new Uint8Array(0);
    let bytes: Uint8Array;
    try {
      bytes = await this.reader.read(start, len);
    } catch (err) {
      throw new RangeReadError(err);
    }
    this.bytesRead += bytes.length;
    return bytes;
  }

  /** Bytes already in hand that start at `offset`: the next parse there begins with them. */
  prime(offset: number, bytes: Uint8Array): void {
    this.prefetched.set(offset, Promise.resolve(bytes));
  }

  /** Starts reading the first window at `offset` (unless one is pending); never rejects. */
  readAhead(offset: number, length: number): Promise<Uint8Array | null> | null {
    if (this.prefetched.has(offset)) return null;
    const p = this.read(offset, length);
    this.prefetched.set(offset, p);
    return p.catch(() => null);
  }

  /**
   * Parses at a file offset with a growing window: `first` bytes, doubled (by appending) until
   * the parse completes or MAX_OBJECT_BYTES is reached.
   */
  async parseAt<T>(offset: number, first: number, parse: (lx: Lexer) => T): Promise<T> {
    const pre = this.prefetched.get(offset);
    this.prefetched.delete(offset);
    let buf = (await pre?.catch(() => null)) ?? (await this.read(offset, Math.max(16, first)));
    for (;;) {
      const complete = offset + buf.length >= this.size;
      try {
        return parse(new Lexer(buf, 0, complete));
      } catch (err) {
        if (!(err instanceof NeedMoreData)) throw err;
        if (complete) throw new PdfError("unexpected end of file inside a PDF object");
        if (buf.length >= MAX_OBJECT_BYTES)
          throw new PdfError(`a PDF object at offset ${offset} is larger than ${MAX_OBJECT_BYTES / 1024 / 1024} MB`);
        const more = await this.read(offset + buf.length, Math.max(buf.length, 1024));
        buf = concatBytes([buf, more]);
      }
    }
  }

  /**
   * Reads `N G obj ...` at `offset`; streams get their raw data read by /Length. An indirect
   * /Length is resolved through `fetch` when one is given (xref streams have direct ones, §7.5.8.2).
   */
  async readIndirectAt(
    offset: number,
    {
      expectNum,
      first,
      fetch,
    }: { expectNum: number | null; first: number; fetch: ((ref: PdfRef) => Promise<PdfObj>) | null },
  ): Promise<IndirectObject> {
    let window: Uint8Array | null = null;
    const head = await this.parseAt(offset, first, (lx) => {
      const h = parseIndirectHeader(lx);
      window = lx.buf;
      return h;
    });
    if (expectNum !== null && head.num !== expectNum) {
      throw new PdfError(`broken cross-reference data: object ${expectNum} is not at offset ${offset}`);
    }
    if (head.streamStart === null) return { value: head.value, stream: null };
    const dict = head.value as PdfDict;
    const buf = window as unknown as Uint8Array;
    const streamStart = head.streamStart;
    const dataAt = offset + streamStart;
    let length: number | null = null;
    const lenObj = dict.get("Length");
    if (isInt(lenObj)) length = lenObj;
    else if (lenObj instanceof PdfRef && fetch) {
      try {
        const v = await fetch(lenObj);
        if (isInt(v)) length = v;
      } catch (err) {
        if (!(err instanceof PdfError)) throw err;
      }
    }
    if (length !== null && length > MAX_STREAM_BYTES)
      throw new PdfError(`a stream at offset ${offset} is larger than ${MAX_STREAM_BYTES / 1024 / 1024} MB`);
    // `endstream` must follow the data (after an optional EOL); 11 bytes cover "\r\nendstream".
    const fileEnd = offset + buf.length >= this.size;
    const inWindow = length !== null && (buf.length >= streamStart + length + 11 || fileEnd);
    // Data already inside the window is taken now; otherwise it is read when first needed, and
    // only the window's tail (the start of the data) is kept meanwhile.
    const have = inWindow ? buf.subarray(streamStart) : buf.slice(streamStart);
    const load = async (): Promise<Uint8Array> => {
      if (length !== null && length >= 0 && dataAt + length <= this.size) {
        const span =
          have.length >= length + 11 || fileEnd
            ? have
            : concatBytes([have, await this.read(dataAt + have.length, length + 32 - have.length)]);
        const tailAt = indexOf(span, "endstream", { from: length, to: Math.min(span.length, length + 32) });
        if (tailAt >= 0 && /^\s*$/.test(latin1(span, length, tailAt))) return span.slice(0, length);
      }
      return this.scanForEndstream(dataAt);
    };
    const stream = inWindow ? new PdfStream(dict, await load()) : new PdfStream(dict, null, load);
    return { value: dict, stream };
  }

  /** /Length missing or wrong: find `endstream` by reading forward in bounded chunks. */
  private async scanForEndstream(dataAt: number): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let total = 0;
    let carry = new Uint8Array(0);
    for (;;) {
      if (total > MAX_STREAM_BYTES)
        throw new PdfError(`a stream at offset ${dataAt} has no endstream within ${MAX_STREAM_BYTES / 1024 / 1024} MB`);
      const chunk = await this.read(dataAt + total, 64 * 1024);
      if (chunk.length === 0) throw new PdfError(`a stream at offset ${dataAt} has no endstream`);
      const joined = concatBytes([carry, chunk]);
      const at = indexOf(joined, "endstream");
      if (at >= 0) {
        parts.push(joined.subarray(0, at));
        let data = concatBytes(parts);
        // Drop the end-of-line that precedes `endstream`.
        let end = data.length;
        if (end > 0 && data[end - 1] === 10) end--;
        if (end > 0 && data[end - 1] === 13) end--;
        data = data.subarray(0, end);
        return data;
      }
      const keep = Math.min(joined.length, 8);
      parts.push(joined.subarray(0, joined.length - keep));
      carry = joined.slice(joined.length - keep);
      total += chunk.length;
    }
  }
}
