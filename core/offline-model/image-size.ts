/**
 * The format and pixel size of an image from its bytes (PNG, JPEG, GIF and WebP headers), for the
 * image rules: a side over the limit, or a `media_type` that does not match the bytes, is a 400.
 */

export type ImageFormat = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
}

/** Decodes base64 (standard alphabet, padding optional); null when it is not base64. */
export function decodeBase64(data: string): Uint8Array | null {
  try {
    const binary = atob(data.replace(/\s+/g, ""));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u24le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
const ascii = (b: Uint8Array, at: number, length: number) => String.fromCharCode(...b.subarray(at, at + length));

function png(b: Uint8Array): ImageInfo | null {
  if (b.length < 24 || u32be(b, 0) !== 0x89504e47 || ascii(b, 12, 4) !== "IHDR") return null;
  return { format: "image/png", width: u32be(b, 16), height: u32be(b, 20) };
}

function gif(b: Uint8Array): ImageInfo | null {
  if (b.length < 10 || !/^GIF8[79]a$/.test(ascii(b, 0, 6))) return null;
  return { format: "image/gif", width: u16le(b, 6), height: u16le(b, 8) };
}

function webp(b: Uint8Array): ImageInfo | null {
  if (b.length < 30 || ascii(b, 0, 4) !== "RIFF" || ascii(b, 8, 4) !== "WEBP") return null;
  const chunk = ascii(b, 12, 4);
  if (chunk === "VP8X") return { format: "image/webp", width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  if (chunk === "VP8L" && b[20] === 0x2f) {
    const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
    return { format: "image/webp", width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 ") return { format: "image/webp", width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  return null;
}

function jpeg(b: Uint8Array): ImageInfo | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1];
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    // Start-of-frame markers (baseline, progressive, …) hold the size; 0xC4, 0xC8 and 0xCC are not frames.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { format: "image/jpeg", height: u16be(b, at + 5), width: u16be(b, at + 7) };
    }
    at += 2 + u16be(b, at + 2);
  }
  return null;
}

/** The image's format and size, or null when its bytes are none of the four formats. */
export function imageInfo(bytes: Uint8Array): ImageInfo | null {
  return png(bytes) ?? jpeg(bytes) ?? gif(bytes) ?? webp(bytes);
}

/** Minimal header bytes of an image of that format and size (tests and fixtures build images with it). */
export function imageHeader(format: ImageFormat, width: number, height: number): Uint8Array {
  const bytes = (values: number[]) => new Uint8Array(values);
  const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
  switch (format) {
    case "image/png":
      return bytes([
        0x89,
        0x50,
        0x4e,
        0x47,
        0x0d,
        0x0a,
        0x1a,
        0x0a,
        0,
        0,
        0,
        13,
        ...text("IHDR"),
        ...be32(width),
        ...be32(height),
        8,
        6,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
      ]);
    case "image/gif":
      return bytes([...text("GIF89a"), width & 255, width >> 8, height & 255, height >> 8, 0, 0, 0]);
    case "image/webp": {
      const w = width - 1;
      const h = height - 1;
      return bytes([
        ...text("RIFF"),
        22,
        0,
        0,
        0,
        ...text("WEBPVP8X"),
        10,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        w & 255,
        (w >> 8) & 255,
        w >> 16,
        h & 255,
        (h >> 8) & 255,
        h >> 16,
      ]);
    }
    case "image/jpeg":
      return bytes([
        0xff,
        0xd8,
        0xff,
        0xe0,
        0,
        4,
        0,
        0,
        0xff,
        0xc0,
        0,
        11,
        8,
        height >> 8,
        height & 255,
        width >> 8,
        width & 255,
        1,
        0,
        0,
        0,
        0xff,
        0xd9,
      ]);
  }
}

/** Base64 of an image header of that format and size, padded with zero bytes to `totalBytes`. */
export function imageBase64(
  format: ImageFormat,
  { width, height, totalBytes = 0 }: { width: number; height: number; totalBytes?: number },
): string {
  const header = imageHeader(format, width, height);
  const all = new Uint8Array(Math.max(totalBytes, header.length));
  all.set(header);
  let binary = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < all.length; i += CHUNK) binary += String.fromCharCode(...all.subarray(i, i + CHUNK));
  return btoa(binary);
}
