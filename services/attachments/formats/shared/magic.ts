// File signatures (magic bytes): what the first bytes of a file prove it is, whatever its name
// or declared type say. Type detection and the image header reader both test them.

export const i32le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);

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
export const isZip = (b: Uint8Array) => startsWith(b, [0x50, 0x4b, 0x03, 0x04]) || startsWith(b, [0x50, 0x4b, 0x05, 0x06]);
export const isPdf = (b: Uint8Array) => startsWith(b, "%PDF-");
/** A %PDF- header anywhere in the first 1024 bytes, where pdf.js still finds it. */
export function hasPdfHeaderNear(b: Uint8Array): boolean {
  for (let i = 0; i <= Math.min(b.length, 1024) - 5; i++) if (b[i] === 0x25 && startsWith(b, "%PDF-", i)) return true;
  return false;
}

// "BM" alone is too weak a signature (plenty of text starts with it); a known DIB header size
// makes a false positive unlikely.
const BMP_DIB_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);
export const isBmp = (b: Uint8Array) => startsWith(b, "BM") && b.length >= 18 && BMP_DIB_SIZES.has(i32le(b, 14));

// An OOXML file is a plain ZIP: these types come from its signature plus its name or declared type.
export const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
export const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
export const PPTX_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation";
