// How big an image is, from its first bytes: a note can state real dimensions without decoding
// (or even fetching) the picture. The header parser itself is pure (core/image-size.ts, shared
// with the turn entrance); this adds reading it through a ranged reader, however far a JPEG's
// metadata pushes its frame header (as the entrance and the API read it).
import { imageInfo, isJpeg, jpegInfo, type ImageInfo } from "../../../../core/image-size";
import type { RangeReader } from "../shared/range-reader";

export { imageInfo, type ImageInfo } from "../../../../core/image-size";

/** The first read: enough for every header but a JPEG's whose metadata comes first. */
const HEAD_BYTES = 4096;
/** Each later read of a JPEG's segments: a segment's payload is at most 64 KB. */
const WINDOW_BYTES = 64 * 1024;
/**
 * How far into a JPEG its frame header is looked for: metadata (EXIF, ICC profiles) can push it
 * well past 256 KB, and the turn entrance and the API read however far it is; past this the size
 * is unknown, and the note says so.
 */
const JPEG_SCAN_BYTES = 16 * 1024 * 1024;

/**
 * imageInfo through a reader. Only JPEG needs more than the first few bytes: its frame header
 * follows the metadata segments, which are walked by their lengths, each read a window at a
 * segment's start (so a long ICC profile costs a few ranged reads, never the whole file in memory).
 */
export async function imageInfoFromReader(reader: RangeReader): Promise<ImageInfo | null> {
  const head = await reader.read(0, Math.min(reader.size, HEAD_BYTES));
  if (!isJpeg(head)) return imageInfo(head);
  const quick = jpegInfo(head);
  return quick === "need-more" ? jpegInfoFromReader(reader, head) : quick;
}

const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/** jpegInfo's walk over the file's segments through the reader, starting with the bytes of `head`. */
async function jpegInfoFromReader(reader: RangeReader, head: Uint8Array): Promise<ImageInfo | null> {
  let window = head;
  let windowAt = 0;
  /** Up to `n` bytes at `at` (fewer at the end of the file), from the window or a new read there. */
  const bytesAt = async (at: number, n: number): Promise<Uint8Array> => {
    if (at < windowAt || at + n > windowAt + window.length) {
      if (at >= reader.size) return new Uint8Array(0);
      window = await reader.read(at, Math.min(reader.size - at, Math.max(n, WINDOW_BYTES)));
      windowAt = at;
    }
    return window.subarray(at - windowAt, at - windowAt + n);
  };
  let i = 2;
  // Each iteration advances i by at least 1, so the walk ends within JPEG_SCAN_BYTES steps.
  while (i < Math.min(reader.size, JPEG_SCAN_BYTES)) {
    if ((await bytesAt(i, 1))[0] !== 0xff) return null;
    // Markers may be preceded by any number of 0xFF fill bytes.
    let next = await bytesAt(++i, 1);
    while (next.length && next[0] === 0xff) next = await bytesAt(++i, 1);
    if (!next.length) return null;
    const marker = next[0];
    i++;
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no payload
    if (marker === 0xd9 || marker === 0xda) return null; // EOI or scan data before any frame header
    const seg = await bytesAt(i, 7);
    if (seg.length < 2) return null;
    const len = (seg[0] << 8) | seg[1];
    if (len < 2) return null;
    if (isSof(marker)) {
      if (seg.length < 7) return null;
      const height = (seg[3] << 8) | seg[4];
      const width = (seg[5] << 8) | seg[6];
      return width > 0 && height > 0 ? { format: "jpeg", width, height } : null;
    }
    i += len;
  }
  return null;
}

/** An image is only ever read whole: the model sees the picture, not a part of it. */
export const imageBytes = (reader: RangeReader): Promise<Uint8Array> => reader.read(0, reader.size);
