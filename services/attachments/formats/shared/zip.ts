// ZIP through ranged reads: the central directory sits at the end of the file, so a reader can
// list an archive and inflate the one entry it needs without fetching (or holding) the rest. XLSX
// and DOCX are ZIPs; both read through here.
import { concatBytes } from "./bytes";
import { Inflate } from "fflate";
import { AttachmentFormatError } from "./errors";
import type { RangeReader } from "./range-reader";

export interface ZipEntry {
  name: string;
  /** 0 = STORED, 8 = DEFLATE; anything else is refused when read. */
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

export interface ListZipOptions {
  /** Cap on the central directory's size (it is read whole). */
  maxDirectoryBytes?: number;
}

const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const ZIP64_EOCD_SIG = 0x06064b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;

const READ_BYTES = 256 * 1024;
// Inflating in small slices bounds what one push can expand to (DEFLATE tops out near 1:1032),
// so a hostile entry cannot balloon memory between two size checks.
const INFLATE_SLICE = 16 * 1024;

const u16 = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8);
const u32 = (b: Uint8Array, i: number) => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
// Exact up to 2^53, which is more than any file a reader can address.
const u64 = (b: Uint8Array, i: number) => u32(b, i) + u32(b, i + 4) * 0x100000000;

async function readExact(
  reader: RangeReader,
  { offset, length, what }: { offset: number; length: number; what: string },
): Promise<Uint8Array> {
  if (offset < 0 || length < 0 || offset + length > reader.size) {
    throw new AttachmentFormatError("truncated", `ZIP ${what} lies outside the file (truncated or corrupt archive)`);
  }
  if (length === 0) return new Uint8Array(0);
  const bytes = await reader.read(offset, length);
  if (bytes.length !== length)
    throw new AttachmentFormatError("truncated", `ZIP ${what}: short read (truncated archive)`);
  return bytes;
}

/** Every entry in the central directory, in directory order. */
export async function listZip(reader: RangeReader, opts: ListZipOptions = {}): Promise<ZipEntry[]> {
  const maxDirectoryBytes = opts.maxDirectoryBytes ?? 16 * 1024 * 1024;
  if (reader.size < EOCD_SIZE) throw new AttachmentFormatError("not_zip", "not a ZIP archive (too small)");
  const tailStart = Math.max(0, reader.size - (EOCD_SIZE + MAX_COMMENT + 20));
  const tail = await readExact(reader, { offset: tailStart, length: reader.size - tailStart, what: "end record" });
  let eocd = -1;
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (u32(tail, i) === EOCD_SIG && i + EOCD_SIZE + u16(tail, i + 20) <= tail.length) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    const head = await reader.read(0, 4);
    if (head.length === 4 && u32(head, 0) === LOCAL_SIG) {
      throw new AttachmentFormatError(
        "truncated",
        "the ZIP archive has no end-of-central-directory record (truncated file?)",
      );
    }
    throw new AttachmentFormatError("not_zip", "not a ZIP archive");
  }

  let count = u16(tail, eocd + 10);
  let dirSize = u32(tail, eocd + 12);
  let dirOffset = u32(tail, eocd + 16);
  if (count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff) {
    // ZIP64: the real numbers are in a second end record that a locator just before this one finds.
    if (eocd >= 20 && u32(tail, eocd - 20) === ZIP64_LOCATOR_SIG) {
      const rec = await readExact(reader, { offset: u64(tail, eocd - 20 + 8), length: 56, what: "ZIP64 end record" });
      if (u32(rec, 0) !== ZIP64_EOCD_SIG) throw new AttachmentFormatError("corrupt_zip", "corrupt ZIP64 end record");
      count = u64(rec, 32);
      dirSize = u64(rec, 40);
      dirOffset = u64(rec, 48);
    }
  }
  if (dirSize > maxDirectoryBytes) {
    throw new AttachmentFormatError(
      "too_large",
      `the ZIP directory is ${dirSize} bytes, over the ${maxDirectoryBytes}-byte limit`,
    );
  }
  const dir = await readExact(reader, { offset: dirOffset, length: dirSize, what: "central directory" });
  const decoder = new TextDecoder("utf-8");
  const entries: ZipEntry[] = [];
  let p = 0;
  // Bounded by the directory's length: each record advances p by at least 46 bytes.
  while (p + 46 <= dir.length && u32(dir, p) === CENTRAL_SIG) {
    const nameLen = u16(dir, p + 28);
    const extraLen = u16(dir, p + 30);
    const commentLen = u16(dir, p + 32);
    const next = p + 46 + nameLen + extraLen + commentLen;
    if (next > dir.length) throw new AttachmentFormatError("corrupt_zip", "corrupt ZIP central directory");
    const entry: ZipEntry = {
      name: decoder.decode(dir.subarray(p + 46, p + 46 + nameLen)),
      flags: u16(dir, p + 8),
      method: u16(dir, p + 10),
      crc32: u32(dir, p + 16),
      compressedSize: u32(dir, p + 20),
      uncompressedSize: u32(dir, p + 24),
      localHeaderOffset: u32(dir, p + 42),
    };
    applyZip64Extra(entry, dir.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen));
    entries.push(entry);
    p = next;
  }
  if (entries.length === 0 && count > 0)
    throw new AttachmentFormatError("corrupt_zip", "corrupt ZIP central directory");
  return entries;
}

function applyZip64Extra(e: ZipEntry, extra: Uint8Array): void {
  let q = 0;
  while (q + 4 <= extra.length) {
    const id = u16(extra, q);
    const len = u16(extra, q + 2);
    if (id === 0x0001) {
      // Only the fields whose 32-bit slot is saturated are present, in this order.
      let f = q + 4;
      const end = q + 4 + len;
      if (e.uncompressedSize === 0xffffffff && f + 8 <= end) {
        e.uncompressedSize = u64(extra, f);
        f += 8;
      }
      if (e.compressedSize === 0xffffffff && f + 8 <= end) {
        e.compressedSize = u64(extra, f);
        f += 8;
      }
      if (e.localHeaderOffset === 0xffffffff && f + 8 <= end) e.localHeaderOffset = u64(extra, f);
      return;
    }
    q += 4 + len;
  }
}

/** The entry with this name; OOXML part names compare case-insensitively, so that is the fallback. */
export function findZipEntry(entries: ZipEntry[], name: string): ZipEntry | undefined {
  const n = name.replace(/^\/+/, "");
  return entries.find((e) => e.name === n) ?? entries.find((e) => e.name.toLowerCase() === n.toLowerCase());
}

async function dataStart(reader: RangeReader, entry: ZipEntry): Promise<number> {
  if (entry.flags & 0x1) throw new AttachmentFormatError("unsupported", `ZIP entry ${entry.name} is encrypted`);
  if (entry.method !== 0 && entry.method !== 8) {
    throw new AttachmentFormatError(
      "unsupported",
      `ZIP entry ${entry.name} uses compression method ${entry.method} (only STORED and DEFLATE are read)`,
    );
  }
  const local = await readExact(reader, {
    offset: entry.localHeaderOffset,
    length: 30,
    what: `local header of ${entry.name}`,
  });
  if (u32(local, 0) !== LOCAL_SIG)
    throw new AttachmentFormatError("corrupt_zip", `corrupt ZIP local header for ${entry.name}`);
  // The local extra field may differ from the central one, so its own lengths place the data.
  const start = entry.localHeaderOffset + 30 + u16(local, 26) + u16(local, 28);
  if (start + entry.compressedSize > reader.size)
    throw new AttachmentFormatError(
      "truncated",
      `ZIP entry ${entry.name} runs past the end of the file (truncated archive)`,
    );
  return start;
}

export interface StreamZipOptions {
  /** Cap on inflated bytes; reaching it throws (a stop requested by the callback does not). */
  maxBytes?: number;
  /** Size of the first ranged read; later reads double up to 256 KB. Small when only a part's head is wanted. */
  readBytes?: number;
}

/**
 * Streams an entry's uncompressed bytes to `onChunk` through bounded ranged reads. Returning false
 * from `onChunk` stops early (complete: false). A complete stream is checked against its CRC.
 */
export async function streamZipEntry(
  reader: RangeReader,
  {
    entry,
    onChunk,
    ...opts
  }: { entry: ZipEntry; onChunk: (chunk: Uint8Array) => boolean | undefined } & StreamZipOptions,
): Promise<{ bytes: number; complete: boolean }> {
  const maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
  const start = await dataStart(reader, entry);
  let out = 0;
  let crc = 0xffffffff;
  let stopped = false;
  let ended = false;
  const deliver = (chunk: Uint8Array) => {
    if (stopped || chunk.length === 0) return;
    out += chunk.length;
    if (out > maxBytes)
      throw new AttachmentFormatError("too_large", `ZIP entry ${entry.name} inflates past the ${maxBytes}-byte limit`);
    crc = crcUpdate(crc, chunk);
    if (onChunk(chunk) === false) stopped = true;
  };
  const inflater =
    entry.method === 8
      ? new Inflate((chunk, final) => {
          deliver(chunk);
          if (final) ended = true;
        })
      : null;

  let pos = 0;
  let readBytes = Math.max(1, Math.min(READ_BYTES, opts.readBytes ?? READ_BYTES));
  try {
    while (pos < entry.compressedSize && !stopped) {
      const data = await readExact(reader, {
        offset: start + pos,
        length: Math.min(readBytes, entry.compressedSize - pos),
        what: `data of ${entry.name}`,
      });
      readBytes = Math.min(READ_BYTES, readBytes * 2);
      pos += data.length;
      if (!inflater) {
        deliver(data);
        continue;
      }
      for (let s = 0; s < data.length && !stopped; s += INFLATE_SLICE) {
        const slice = data.subarray(s, Math.min(data.length, s + INFLATE_SLICE));
        inflater.push(slice, pos === entry.compressedSize && s + INFLATE_SLICE >= data.length);
      }
    }
    if (inflater && !stopped && !ended) inflater.push(new Uint8Array(0), true);
  } catch (err) {
    if (err instanceof AttachmentFormatError) throw err;
    throw new AttachmentFormatError(
      "corrupt_zip",
      `ZIP entry ${entry.name} does not inflate: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (stopped) return { bytes: out, complete: false };
  if (out !== entry.uncompressedSize || (crc ^ 0xffffffff) >>> 0 !== entry.crc32) {
    throw new AttachmentFormatError("corrupt_zip", `ZIP entry ${entry.name} is corrupt (size or checksum mismatch)`);
  }
  return { bytes: out, complete: true };
}

/**
 * Streams an entry as UTF-8 text (a character split across chunks comes whole with the next).
 * `onText` gets the text not yet consumed (what it left last time, then the new piece) and the
 * uncompressed bytes streamed so far, and returns how many characters it consumed, or false to stop
 * early (complete: false, as with streamZipEntry).
 */
export async function streamZipText(
  reader: RangeReader,
  {
    entry,
    onText,
    ...opts
  }: { entry: ZipEntry; onText: (text: string, bytesSoFar: number) => number | false } & StreamZipOptions,
): Promise<{ bytes: number; complete: boolean }> {
  const decoder = new TextDecoder("utf-8");
  let seen = 0;
  let pending = "";
  return streamZipEntry(reader, {
    ...opts,
    entry,
    onChunk: (chunk) => {
      seen += chunk.length;
      const text = pending + decoder.decode(chunk, { stream: true });
      const used = onText(text, seen);
      if (used === false) return false;
      pending = text.slice(used);
    },
  });
}

/** An entry's whole uncompressed bytes, for small parts; larger than maxBytes (default 32 MB) throws. */
export async function readZipEntry(
  reader: RangeReader,
  entry: ZipEntry,
  opts: { maxBytes?: number } = {},
): Promise<Uint8Array> {
  const maxBytes = opts.maxBytes ?? 32 * 1024 * 1024;
  if (entry.uncompressedSize > maxBytes) {
    throw new AttachmentFormatError(
      "too_large",
      `ZIP entry ${entry.name} is ${entry.uncompressedSize} bytes, over the ${maxBytes}-byte limit`,
    );
  }
  const parts: Uint8Array[] = [];
  await streamZipEntry(reader, { entry, onChunk: (c) => void parts.push(c), maxBytes });
  return concatBytes(parts);
}

let CRC_TABLE: Uint32Array | null = null;

function crcUpdate(crc: number, data: Uint8Array): number {
  if (!CRC_TABLE) {
    CRC_TABLE = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[n] = c >>> 0;
    }
  }
  const t = CRC_TABLE;
  for (let i = 0; i < data.length; i++) crc = t[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return crc;
}
