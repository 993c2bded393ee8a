// File signatures (magic bytes): what the first bytes of a file prove it is, whatever its name
// or declared type say. Type detection and the image header reader both test them.

// The image signatures live with the image header parser in core/ (pure, shared with the turn
// entrance); they are re-exported so detection keeps one place to look.
export { i32le, isBmp, isGif, isJpeg, isPng, isWebp, startsWith } from "../../../../core/image-size";
import { startsWith } from "../../../../core/image-size";

export const isZip = (b: Uint8Array) =>
  startsWith(b, [0x50, 0x4b, 0x03, 0x04]) || startsWith(b, [0x50, 0x4b, 0x05, 0x06]);
export const isPdf = (b: Uint8Array) => startsWith(b, "%PDF-");
/** A %PDF- header anywhere in the first 1024 bytes, where pdf.js still finds it. */
export function hasPdfHeaderNear(b: Uint8Array): boolean {
  for (let i = 0; i <= Math.min(b.length, 1024) - 5; i++) if (b[i] === 0x25 && startsWith(b, "%PDF-", i)) return true;
  return false;
}

// An OOXML file is a plain ZIP: these types come from its signature plus its name or declared type.
export const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
export const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
export const PPTX_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation";
