/**
 * Random access to a file without holding it in memory. Attachments live in R2, where each
 * `read` becomes one ranged GET; parsers built on this (see `pdf/read.ts`) read only what they need.
 */
export interface RangeReader {
  /** Total size in bytes. */
  readonly size: number;
  /** Bytes [offset, offset + length) (clamped to the file). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** In-memory reader for tests, counting bytes and calls so tests can assert bounded reads. */
export function memoryRangeReader(bytes: Uint8Array): RangeReader & { bytesRead: number; calls: number } {
  const reader = {
    size: bytes.length,
    bytesRead: 0,
    calls: 0,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const start = Math.max(0, Math.min(bytes.length, Math.floor(offset)));
      const end = Math.max(start, Math.min(bytes.length, Math.floor(offset + length)));
      reader.calls++;
      reader.bytesRead += end - start;
      return bytes.slice(start, end);
    },
  };
  return reader;
}
