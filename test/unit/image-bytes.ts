// Image bytes for the image-limit tests: a PNG's header at any claimed size (the limits read only
// the header), padded to a chosen length, and base64 as a request carries it.
import { u8 } from "./format-bytes";

const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

/** PNG signature and IHDR for width x height, then `pad` zero bytes. */
export const pngHead = (width: number, height: number, pad = 0): Uint8Array =>
  u8(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13],
    "IHDR",
    be32(width),
    be32(height),
    [8, 6, 0, 0, 0, 0, 0, 0, 0],
    new Uint8Array(pad),
  );

/** A JPEG's start and frame header for width x height. */
export const jpegHead = (width: number, height: number): Uint8Array =>
  u8(
    [0xff, 0xd8, 0xff, 0xe0, 0, 16],
    "JFIF\0",
    [1, 1, 0, 0, 1, 0, 1, 0, 0],
    [0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1],
  );

export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");

/** An image block as a turn or a tool result carries it. */
export const imageBlock = (data: string, media_type = "image/png") => ({
  type: "image" as const,
  source: { type: "base64" as const, media_type, data },
});
