/**
 * Stream filters (ISO 32000-1 §7.4): FlateDecode through the web-standard DecompressionStream
 * (Node 22 and Workers both have it), LZWDecode, ASCIIHexDecode, ASCII85Decode, RunLengthDecode,
 * and the PNG (10-15) and TIFF (2, 8-bit components) predictors. Image-only filters (DCT, JPX,
 * JBIG2, CCITTFax) and Crypt are rejected with a PdfError. Output is capped so a small
 * compressed stream cannot expand without bound.
 */
import { isInt, PdfDict, PdfError, PdfName, type PdfObj } from "./objects";
import { concatBytes } from "../shared/bytes";

export const MAX_DECODED_BYTES = 48 * 1024 * 1024;

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

/** Decodes stream bytes through the stream's filters. */
export async function decodeStream(dict: PdfDict, raw: Uint8Array, maxOut = MAX_DECODED_BYTES): Promise<Uint8Array> {
  let data = raw;
  for (const { name, parms } of streamFilters(dict)) {
    switch (name) {
      case "FlateDecode":
        data = applyPredictor(await inflate(data, maxOut), parms, maxOut);
        break;
      case "LZWDecode": {
        const early = parms?.get("EarlyChange");
        data = applyPredictor(lzwDecode(data, early === 0 ? 0 : 1, maxOut), parms, maxOut);
        break;
      }
      case "ASCIIHexDecode":
        data = asciiHexDecode(data);
        break;
      case "ASCII85Decode":
        data = ascii85Decode(data);
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
  const out = await runDecompression(hasZlibHeader ? "deflate" : "deflate-raw", data, maxOut);
  if (out.bytes.length === 0 && out.failed) {
    if (hasZlibHeader) {
      // A header that merely looks valid: try the body as raw deflate.
      const raw = await runDecompression("deflate-raw", data.subarray(2), maxOut);
      if (raw.bytes.length > 0) return raw.bytes;
    }
    throw new PdfError("corrupt FlateDecode stream");
  }
  return out.bytes;
}

async function runDecompression(
  format: "deflate" | "deflate-raw",
  data: Uint8Array,
  maxOut: number,
): Promise<{ bytes: Uint8Array; failed: boolean }> {
  const ds = new DecompressionStream(format);
  const writer = ds.writable.getWriter();
  // Errors surface on the readable side; the writer's promises must not go unhandled.
  writer.write(data as Uint8Array<ArrayBuffer>).catch(() => {});
  writer.close().catch(() => {});
  const reader = ds.readable.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let failed = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxOut) {
        reader.cancel().catch(() => {});
        throw new PdfError(`a compressed stream expands past ${Math.round(maxOut / 1024 / 1024)} MB`);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof PdfError) throw err;
    failed = true;
  }
  return { bytes: concatBytes(chunks), failed };
}

function intParm(parms: PdfDict | null, key: string, dflt: number): number {
  const v = parms?.get(key);
  return isInt(v) ? v : dflt;
}

/** PNG and TIFF predictors (§7.4.4.4). */
export function applyPredictor(data: Uint8Array, parms: PdfDict | null, maxOut = MAX_DECODED_BYTES): Uint8Array {
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
    const out = data.slice();
    for (let r = 0; r + rowLen <= out.length; r += rowLen) {
      for (let i = bpp; i < rowLen; i++) out[r + i] = (out[r + i] + out[r + i - bpp]) & 0xff;
    }
    return out;
  }
  if (predictor < 10 || predictor > 15) throw new PdfError(`unsupported predictor ${predictor}`);
  const rows = Math.floor(data.length / (rowLen + 1));
  if (rows * rowLen > maxOut) throw new PdfError("a predicted stream is too large");
  const out = new Uint8Array(rows * rowLen);
  let prev = new Uint8Array(rowLen);
  for (let r = 0; r < rows; r++) {
    const src = r * (rowLen + 1);
    const type = data[src];
    const row = out.subarray(r * rowLen, (r + 1) * rowLen);
    for (let i = 0; i < rowLen; i++) {
      const x = data[src + 1 + i];
      const a = i >= bpp ? row[i - bpp] : 0;
      const b = prev[i];
      const c = i >= bpp ? prev[i - bpp] : 0;
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
      row[i] = v & 0xff;
    }
    prev = row;
  }
  return out;
}

function lzwDecode(data: Uint8Array, earlyChange: number, maxOut: number): Uint8Array {
  const out: number[] = [];
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
      if (code === 257) return Uint8Array.from(out);
      let entry: Uint8Array;
      if (code < dict.length) entry = dict[code];
      else if (code === dict.length && prev) {
        entry = new Uint8Array(prev.length + 1);
        entry.set(prev);
        entry[prev.length] = prev[0];
      } else throw new PdfError("corrupt LZWDecode stream");
      for (const byte of entry) out.push(byte);
      if (out.length > maxOut) throw new PdfError("an LZW stream expands too far");
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
  return Uint8Array.from(out);
}

function asciiHexDecode(data: Uint8Array): Uint8Array {
  const out: number[] = [];
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
  return Uint8Array.from(out);
}

function ascii85Decode(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  const group: number[] = [];
  let i = 0;
  if (data[0] === 0x3c && data[1] === 0x7e) i = 2; // optional <~
  for (; i < data.length; i++) {
    const c = data[i];
    if (c === 0x7e) break; // ~>
    if (c === 0x7a && group.length === 0) {
      out.push(0, 0, 0, 0);
      continue;
    }
    if (c < 0x21 || c > 0x75) continue;
    group.push(c - 0x21);
    if (group.length === 5) {
      let v = 0;
      for (const g of group) v = v * 85 + g;
      out.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
      group.length = 0;
    }
  }
  if (group.length > 1) {
    const n = group.length;
    while (group.length < 5) group.push(84);
    let v = 0;
    for (const g of group) v = v * 85 + g;
    const bytes = [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
    out.push(...bytes.slice(0, n - 1));
  }
  return Uint8Array.from(out);
}

function runLengthDecode(data: Uint8Array, maxOut: number): Uint8Array {
  const out: number[] = [];
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
    if (out.length > maxOut) throw new PdfError("a RunLength stream expands too far");
  }
  return Uint8Array.from(out);
}
