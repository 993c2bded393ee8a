// A RangeReader over one R2 object: every read is a ranged GET, so a reader never holds more of
// a file than the ranges it asked for.
import type { RangeReader } from "./formats/shared/range-reader";

export interface CountingRangeReader extends RangeReader {
  bytesRead: number;
  calls: number;
}

export async function r2RangeReader(bucket: R2Bucket, key: string): Promise<CountingRangeReader | null> {
  const head = await bucket.head(key);
  if (!head) return null;
  const reader: CountingRangeReader = {
    size: head.size,
    bytesRead: 0,
    calls: 0,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const start = Math.max(0, Math.min(offset, head.size));
      const len = Math.max(0, Math.min(length, head.size - start));
      if (len === 0) return new Uint8Array(0);
      const obj = await bucket.get(key, { range: { offset: start, length: len } });
      if (!obj) throw new Error("the attachment's bytes are gone");
      const bytes = new Uint8Array(await obj.arrayBuffer());
      reader.bytesRead += bytes.length;
      reader.calls++;
      return bytes;
    },
  };
  return reader;
}
