// Writes one R2 object of unknown length without holding it: text goes out in multipart parts of
// exactly PART_BYTES; an object smaller than one part is one put. R2 refuses to complete an upload
// whose parts differ in size (every part but the last the same size, the last no larger), so a
// part is cut at PART_BYTES whatever the pieces written, and what is left waits for the next one.
// At most one part and one piece are held.
import { withRetry } from "../record/retry";

/** R2's minimum for every part but the last. */
export const PART_BYTES = 5 * 1024 * 1024;

export class R2StreamWriter {
  private readonly encoder = new TextEncoder();
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private upload: R2MultipartUpload | null = null;
  private readonly parts: R2UploadedPart[] = [];
  bytes = 0;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly key: string,
    private readonly contentType: string,
  ) {}

  async write(text: string): Promise<void> {
    const chunk = this.encoder.encode(text);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.bytes += chunk.length;
    while (this.pendingBytes >= PART_BYTES) await this.flushPart(this.take(PART_BYTES));
  }

  /** The first `n` pending bytes (n <= pendingBytes) as one array; the rest stays pending. */
  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = this.pending[0];
      const used = Math.min(c.length, n - at);
      out.set(used === c.length ? c : c.subarray(0, used), at);
      at += used;
      if (used === c.length) this.pending.shift();
      else this.pending[0] = c.subarray(used);
    }
    this.pendingBytes -= n;
    return out;
  }

  private async flushPart(body: Uint8Array): Promise<void> {
    this.upload ??= await this.bucket.createMultipartUpload(this.key, {
      httpMetadata: { contentType: this.contentType },
    });
    const upload = this.upload;
    const n = this.parts.length + 1;
    this.parts.push(await withRetry("export part upload", () => upload.uploadPart(n, body)));
  }

  async close(): Promise<void> {
    const rest = this.take(this.pendingBytes);
    if (!this.upload) {
      await withRetry("export write", () =>
        this.bucket.put(this.key, rest, { httpMetadata: { contentType: this.contentType } }),
      );
      return;
    }
    // Shorter than a full part, as the last part may be.
    if (rest.length) await this.flushPart(rest);
    await this.upload.complete(this.parts);
  }

  async abort(): Promise<void> {
    await this.upload?.abort().catch(() => {});
  }
}
