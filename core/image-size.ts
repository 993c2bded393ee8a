// How big an image is, from its first bytes (PNG, JPEG, GIF, WebP, BMP headers): the dimensions
// the Messages API checks (a side over 8000 px is refused) can be known without decoding the
// picture. Pure, so the turn entrance (core/), the attachment probe and the tools share one reader.

export interface ImageInfo {
  format: "png" | "jpeg" | "gif" | "webp" | "bmp";
  width: number;
  height: number;
}

// JPEG metadata (EXIF thumbnails, ICC profiles) can push the frame header far from the start;
// past this we give up rather than read an unbounded prefix.
export const JPEG_MAX_PREFIX = 256 * 1024;

export const i32le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
const u16be = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const u16le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8);
const u24le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const u32be = (b: Uint8Array, i: number) => ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;

export function startsWith(b: Uint8Array, sig: readonly number[] | string, at = 0): boolean {
  const codes = typeof sig === "string" ? Array.from(sig, (c) => c.charCodeAt(0)) : sig;
  if (b.length < at + codes.length) return false;
  for (let i = 0; i < codes.length; i++) if (b[at + i] !== codes[i]) return false;
  return true;
}

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
export const isPng = (b: Uint8Array) => startsWith(b, PNG_SIG);
export const isJpeg = (b: Uint8Array) => startsWith(b, [0xff, 0xd8, 0xff]);
export const isGif = (b: Uint8Array) => startsWith(b, "GIF87a") || startsWith(b, "GIF89a");
export const isWebp = (b: Uint8Array) => startsWith(b, "RIFF") && startsWith(b, "WEBP", 8);
// "BM" alone is too weak a signature (plenty of text starts with it); a known DIB header size
// makes a false positive unlikely.
const BMP_DIB_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);
export const isBmp = (b: Uint8Array) => startsWith(b, "BM") && b.length >= 18 && BMP_DIB_SIZES.has(i32le(b, 14));

/** A JPEG's frame header, or "need-more" when the prefix ends before it. */
export function jpegInfo(b: Uint8Array): ImageInfo | "need-more" | null {
  let i = 2;
  // Each iteration advances i by at least 1, so the walk ends within b.length steps.
  while (i < b.length) {
    if (b[i] !== 0xff) return null;
    // Markers may be preceded by any number of 0xFF fill bytes.
    while (i < b.length && b[i] === 0xff) i++;
    if (i >= b.length) return "need-more";
    const marker = b[i];
    i++;
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no payload
    if (marker === 0xd9 || marker === 0xda) return null; // EOI or scan data before any frame header
    if (i + 2 > b.length) return "need-more";
    const len = u16be(b, i);
    if (len < 2) return null;
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      if (i + 7 > b.length) return "need-more";
      const height = u16be(b, i + 3);
      const width = u16be(b, i + 5);
      return width > 0 && height > 0 ? { format: "jpeg", width, height } : null;
    }
    i += len;
  }
  return "need-more";
}

/** Image format and dimensions from the first bytes of a file, or null when not a known image. */
export function imageInfo(head: Uint8Array): ImageInfo | null {
  if (isPng(head)) {
    if (head.length < 24 || !startsWith(head, "IHDR", 12)) return null;
    const width = u32be(head, 16);
    const height = u32be(head, 20);
    return width > 0 && height > 0 ? { format: "png", width, height } : null;
  }
  if (isJpeg(head)) {
    const r = jpegInfo(head);
    return r === "need-more" ? null : r;
  }
  if (isGif(head)) {
    if (head.length < 10) return null;
    return { format: "gif", width: u16le(head, 6), height: u16le(head, 8) };
  }
  if (isWebp(head)) return webpInfo(head);
  if (isBmp(head)) {
    if (i32le(head, 14) === 12) {
      if (head.length < 22) return null;
      return { format: "bmp", width: u16le(head, 18), height: u16le(head, 20) };
    }
    if (head.length < 26) return null;
    // A negative height means the rows are stored top-down; the size is its absolute value.
    return { format: "bmp", width: Math.abs(i32le(head, 18)), height: Math.abs(i32le(head, 22)) };
  }
  return null;
}

function webpInfo(b: Uint8Array): ImageInfo | null {
  if (startsWith(b, "VP8 ", 12)) {
    if (b.length < 30 || !startsWith(b, [0x9d, 0x01, 0x2a], 23)) return null;
    return { format: "webp", width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (startsWith(b, "VP8L", 12)) {
    if (b.length < 25 || b[20] !== 0x2f) return null;
    const bits = (b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24)) >>> 0;
    return { format: "webp", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (startsWith(b, "VP8X", 12)) {
    if (b.length < 30) return null;
    return { format: "webp", width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  }
  return null;
}
