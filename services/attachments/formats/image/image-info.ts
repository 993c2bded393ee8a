// How big an image is, from its first bytes: a note can state real dimensions without decoding
// (or even fetching) the picture. The header parser itself is pure (core/image-size.ts, shared
// with the turn entrance); this adds reading it through a ranged reader.
import { imageInfo, isJpeg, JPEG_MAX_PREFIX, jpegInfo, type ImageInfo } from "../../../../core/image-size";
import type { RangeReader } from "../shared/range-reader";

export { imageInfo, type ImageInfo } from "../../../../core/image-size";

/**
 * imageInfo through a reader. Only JPEG needs more than the first few bytes: its frame header
 * follows the metadata segments, so the prefix grows (reading only the new part each time) up to
 * 256 KB.
 */
export async function imageInfoFromReader(reader: RangeReader): Promise<ImageInfo | null> {
  let head = await reader.read(0, Math.min(reader.size, 4096));
  if (!isJpeg(head)) return imageInfo(head);
  for (;;) {
    const r = jpegInfo(head);
    if (r !== "need-more") return r;
    const want = Math.min(reader.size, JPEG_MAX_PREFIX, head.length * 4);
    if (want <= head.length) return null;
    const more = await reader.read(head.length, want - head.length);
    if (more.length === 0) return null;
    const grown = new Uint8Array(head.length + more.length);
    grown.set(head);
    grown.set(more, head.length);
    head = grown;
  }
}

/** An image is only ever read whole: the model sees the picture, not a part of it. */
export const imageBytes = (reader: RangeReader): Promise<Uint8Array> => reader.read(0, reader.size);
