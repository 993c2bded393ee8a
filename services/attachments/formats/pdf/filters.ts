/**
 * Stream filters (ISO 32000-1 §7.4): FlateDecode through the web-standard DecompressionStream
 * (Node 22 and Workers both have it), LZWDecode, ASCIIHexDecode, ASCII85Decode, RunLengthDecode,
 * and the PNG (10-15) and TIFF (2, 8-bit components) predictors. Image-only filters (DCT, JPX,
 * JBIG2, CCITTFax) and Crypt are rejected with a PdfError. Output is capped so a small
 * compressed stream cannot expand without bound: each filter writes into one buffer that never
 * grows past the cap, and one byte more is a PdfTooLarge.
 */
import { isInt, PdfDict, PdfError, PdfName, type PdfObj, PdfTooLarge } from "./objects";

/**
 * Most bytes one stream decodes to. Real files stay far below it: on the corpus bench's files
 * (docs/pdf-corpus.md) a page's content is at most 3.2 MB decoded and an object stream 12.4 MB.
 */
export const MAX_DECODED_BYTES = 16 * 1024 * 1024;

/** "16 MB", "256 KB": a limit as an error message names it. */
export function byteSize(n: number): string {
  const mb = n / 1024 / 1024;
  return mb >= 1 ? `${Math.round(mb * 10) / 10} MB` : `${Math.ceil(n / 1024)} KB`;
}

/**
 * Decoded bytes in one buffer, grown by doubling but never past `max`: a decode holds at most its
 * limit (and, while growing, the half-size buffer it grows from), never a list of chunks beside a
 * joined copy of them.
 */
class ByteSink {
  private buf: Uint8Array;
  length = 0;

  constructor(
    private readonly max: number,
    sizeHint: number,
  ) {
    this.buf = new Uint8Array(Math.max(0, Math.min(max, Math.floor(Math.max(sizeHint, 4096)))));
  }

  private grow(need: number): void {
    if (need > this.max) throw new PdfTooLarge(`a stream decodes to more than ${byteSize(this.max)}`, this.max);
    let size = Math.max(this.buf.length * 2, 4096);
    while (size < need) size *= 2;
    const next = new Uint8Array(Math.min(size, this.max));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  push(byte: number): void {
    if (this.length === this.buf.length) this.grow(this.length + 1);
    this.buf[this.length++] = byte;
  }

  append(bytes: Uint8Array): void {
    const need = this.length + bytes.length;
    if (need > this.buf.length) this.grow(need);
    this.buf.set(bytes, this.length);
    this.length = need;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const ABBREVIATIONS: Record<string, string> = {
  Fl: "FlateDecode",
  LZW: "LZWDecode",
  AHx: "ASCIIHexDecode",
  A85: "ASCII85Decode",
  RL: "RunLengthDecode",
  DCT: "DCTDecode",
  CCF: "CCITTFaxDecode",
};

/** Filter names and their parameters, normalised from a stream dictionary (direct objects only). */
export function streamFilters(dict: PdfDict): { name: string; parms: PdfDict | null }[] {
  const f = dict.get("Filter") ?? dict.get("F");
  const p = dict.get("DecodeParms") ?? dict.get("DP");
  const names = f instanceof PdfName ? [f] : Array.isArray(f) ? f : [];
  const parms: PdfObj[] = Array.isArray(p) ? p : [p ?? null];
  if (f !== undefined && f !== null && !(f instanceof PdfName) && !Array.isArray(f))
    throw new PdfError("malformed /Filter in a stream");
  return names.map((n, i) => {
    if (!(n instanceof PdfName)) throw new PdfError("malformed /Filter in a stream");
    const parm = parms[i];
    return { name: ABBREVIATIONS[n.name] ?? n.name, parms: parm instanceof PdfDict ? parm : null };
  });
}

/**
 * Decodes stream bytes through the stream's filters; more than `maxOut` bytes from any of them
 * (or unfiltered data longer than that) is a PdfTooLarge.
 */
export async function decodeStream(dict: PdfDict, raw: Uint8Array, maxOut = MAX_DECODED_BYTES): Promise<Uint8Array> {
  let data = raw;
  for (const { name, parms } of streamFilters(dict)) {
    switch (name) {
      case "FlateDecode":
        data = applyPredictor(await inflate(data, maxOut), parms);
        break;
      case "LZWDecode": {
        const early = parms?.get("EarlyChange");
        data = applyPredictor(lzwDecode(data, early === 0 ? 0 : 1, maxOut), parms);
        break;
      }
      case "ASCIIHexDecode":
        data = asciiHexDecode(data, maxOut);
        break;
      case "ASCII85Decode":
        data = ascii85Decode(data, maxOut);
        break;
      case "RunLengthDecode":
        data = runLengthDecode(data, maxOut);
        break;
      default:
        throw new PdfError(
          `unsupported stream filter /${name} (supported: FlateDecode, LZWDecode, ASCIIHexDecode, ASCII85Decode, RunLengthDecode)`,
        );
    }
  }
  if (data.length > maxOut) throw new PdfTooLarge(`a stream is more than ${byteSize(maxOut)}`, maxOut);
  return data;
}

/**
 * zlib inflate. Damaged streams are common in the wild, so output produced before an error is
 * kept (and a raw-deflate retry is made when a stream lacks the zlib header); only a stream that
 * yields nothing at all is an error.
 */
export async function inflate(data: Uint8Array, maxOut = MAX_DECODED_BYTES): Promise<Uint8Array> {
  if (data.length === 0) return data;
  const hasZlibHeader = data.length >= 2 && (data[0] & 0x0f) === 8 && ((data[0] << 8) | data[1]) % 31 === 0;
  const out = new ByteSink(maxOut, data.length * 4);
  const failed = await runDecompression(hasZlibHeader ? "deflate" : "deflate-raw", data, out);
  if (out.length === 0 && failed) {
    if (hasZlibHeader) {
      // A header that merely looks valid: try the body as raw deflate.
      const raw = new ByteSink(maxOut, data.length * 4);
      await runDecompression("deflate-raw", data.subarray(2), raw);
      if (raw.length > 0) return raw.bytes();
    }
    throw new PdfError("corrupt FlateDecode stream");
  }
  return out.bytes();
}

/** Inflates `data` into `out`; true when the data was damaged (what came before the damage stays in `out`). */
async function runDecompression(format: "deflate" | "deflate-raw", data: Uint8Array, out: ByteSink): Promise<boolean> {
  const ds = new DecompressionStream(format);
  const writer = ds.writable.getWriter();
  // Errors surface on the readable side; the writer's promises must not go unhandled.
  writer.write(data as Uint8Array<ArrayBuffer>).catch(() => {});
  writer.close().catch(() => {});
  const reader = ds.readable.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      // Each chunk is copied in and let go: past the cap this throws before holding more.
      out.append(value);
    }
  } catch (err) {
    if (!(err instanceof PdfError)) return true;
    reader.cancel().catch(() => {});
    throw err;
  }
}

function intParm(parms: PdfDict | null, key: string, dflt: number): number {
  const v = parms?.get(key);
  return isInt(v) ? v : dflt;
}

/**
 * PNG and TIFF predictors (§7.4.4.4), undone in place: each output byte lands at or before the
 * input bytes still to be read, so no second buffer the stream's size is made.
 */
export function applyPredictor(data: Uint8Array, parms: PdfDict | null): Uint8Array {
  const predictor = intParm(parms, "Predictor", 1);
  if (predictor <= 1) return data;
  const colors = intParm(parms, "Colors", 1);
  const bpc = intParm(parms, "BitsPerComponent", 8);
  const columns = intParm(parms, "Columns", 1);
  if (colors < 1 || colors > 32 || ![1, 2, 4, 8, 16].includes(bpc) || columns < 1 || columns > 1 << 24) {
    throw new PdfError("invalid predictor parameters in a stream");
  }
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLen = Math.ceil((colors * bpc * columns) / 8);
  if (predictor === 2) {
    if (bpc !== 8) throw new PdfError(`unsupported TIFF predictor with ${bpc}-bit components`);
    for (let r = 0; r + rowLen <= data.length; r += rowLen) {
      for (let i = bpp; i < rowLen; i++) data[r + i] = (data[r + i] + data[r + i - bpp]) & 0xff;
    }
    return data;
  }
  if (predictor < 10 || predictor > 15) throw new PdfError(`unsupported predictor ${predictor}`);
  const rows = Math.floor(data.length / (rowLen + 1));
  // Row r's output goes to r * rowLen, its input (a type byte, then the row) starts at
  // r * (rowLen + 1): writing left to right never overwrites input not yet read, and the previous
  // row's output stays where this row reads it.
  for (let r = 0; r < rows; r++) {
    const src = r * (rowLen + 1);
    const type = data[src];
    const at = r * rowLen;
    const up = at - rowLen;
    for (let i = 0; i < rowLen; i++) {
      const x = data[src + 1 + i];
      const a = i >= bpp ? data[at + i - bpp] : 0;
      const b = r > 0 ? data[up + i] : 0;
      const c = r > 0 && i >= bpp ? data[up + i - bpp] : 0;
      let v: number;
      switch (type) {
        case 0:
          v = x;
          break;
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + b;
          break;
        case 3:
          v = x + ((a + b) >> 1);
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default:
          throw new PdfError(`invalid PNG predictor row type ${type}`);
      }
      data[at + i] = v & 0xff;
    }
  }
  return data.subarray(0, rows * rowLen);
}

function lzwDecode(data: Uint8Array, earlyChange: number, maxOut: number): Uint8Array {
  const out = new ByteSink(maxOut, data.length * 2);
  let dict: Uint8Array[] = [];
  const reset = () => {
    dict = [];
    for (let i = 0; i < 256; i++) dict.push(Uint8Array.of(i));
    dict.push(new Uint8Array(0), new Uint8Array(0)); // 256 clear, 257 EOD
  };
  reset();
  let codeLen = 9;
  let bitBuf = 0;
  let bitCount = 0;
  let prev: Uint8Array | null = null;
  for (let i = 0; i < data.length; i++) {
    bitBuf = ((bitBuf << 8) | data[i]) >>> 0;
    bitCount += 8;
    while (bitCount >= codeLen) {
      const code = (bitBuf >>> (bitCount - codeLen)) & ((1 << codeLen) - 1);
      bitCount -= codeLen;
      bitBuf &= (1 << bitCount) - 1;
      if (code === 256) {
        reset();
        codeLen = 9;
        prev = null;
        continue;
      }
      if (code === 257) return out.bytes();
      let entry: Uint8Array;
      if (code < dict.length) entry = dict[code];
      else if (code === dict.length && prev) {
        entry = new Uint8Array(prev.length + 1);
        entry.set(prev);
        entry[prev.length] = prev[0];
      } else throw new PdfError("corrupt LZWDecode stream");
      out.append(entry);
      if (prev && dict.length < 4096) {
        const add = new Uint8Array(prev.length + 1);
        add.set(prev);
        add[prev.length] = entry[0];
        dict.push(add);
      }
      prev = entry;
      const next = dict.length + earlyChange;
      codeLen = next >= 2048 ? 12 : next >= 1024 ? 11 : next >= 512 ? 10 : 9;
    }
  }
  return out.bytes();
}

function asciiHexDecode(data: Uint8Array, maxOut: number): Uint8Array {
  const out = new ByteSink(maxOut, data.length / 2);
  let hi = -1;
  for (const c of data) {
    if (c === 0x3e) break;
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (v < 0) continue;
    if (hi < 0) hi = v;
    else {
      out.push(hi * 16 + v);
      hi = -1;
    }
  }
  if (hi >= 0) out.push(hi * 16);
  return out.bytes();
}

function ascii85Decode(data: Uint8Array, maxOut: number): Uint8Array {
  const out = new ByteSink(maxOut, data.length);
  const group: number[] = [];
  let i = 0;
  if (data[0] === 0x3c && data[1] === 0x7e) i = 2; // optional <~
  const word = (v: number, bytes: number) => {
    for (let k = 0; k < bytes; k++) out.push((v >>> (24 - 8 * k)) & 0xff);
  };
  for (; i < data.length; i++) {
    const c = data[i];
    if (c === 0x7e) break; // ~>
    if (c === 0x7a && group.length === 0) {
      word(0, 4);
      continue;
    }
    if (c < 0x21 || c > 0x75) continue;
    group.push(c - 0x21);
    if (group.length === 5) {
      let v = 0;
      for (const g of group) v = v * 85 + g;
      word(v, 4);
      group.length = 0;
    }
  }
  if (group.length > 1) {
    const n = group.length;
    while (group.length < 5) group.push(84);
    let v = 0;
    for (const g of group) v = v * 85 + g;
    word(v, n - 1);
  }
  return out.bytes();
}

function runLengthDecode(data: Uint8Array, maxOut: number): Uint8Array {
  const out = new ByteSink(maxOut, data.length * 2);
  let i = 0;
  while (i < data.length) {
    const n = data[i++];
    if (n === 128) break;
    if (n < 128) {
      for (let k = 0; k <= n && i < data.length; k++) out.push(data[i++]);
    } else if (i < data.length) {
      const b = data[i++];
      for (let k = 0; k < 257 - n; k++) out.push(b);
    }
  }
  return out.bytes();
}
