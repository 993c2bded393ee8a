// Writes one R2 object of unknown length without holding it: text goes out in multipart parts of
// 5 MiB (R2's minimum for every part but the last); an object smaller than one part is one put.
import { withRetry } from "../record/retry";

const PART_BYTES = 5 * 1024 * 1024;

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
    if (this.pendingBytes >= PART_BYTES) await this.flushPart();
  }

  private take(): Uint8Array {
    const out = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const c of this.pending) (out.set(c, at), (at += c.length));
    this.pending = [];
    this.pendingBytes = 0;
    return out;
  }

  private async flushPart(): Promise<void> {
    this.upload ??= await this.bucket.createMultipartUpload(this.key, { httpMetadata: { contentType: this.contentType } });
    const body = this.take();
    const upload = this.upload;
    const n = this.parts.length + 1;
    this.parts.push(await withRetry("export part upload", () => upload.uploadPart(n, body)));
  }

  async close(): Promise<void> {
    if (!this.upload) {
      const body = this.take();
      await withRetry("export write", () => this.bucket.put(this.key, body, { httpMetadata: { contentType: this.contentType } }));
      return;
    }
    if (this.pendingBytes) await this.flushPart();
    await this.upload.complete(this.parts);
  }

  async abort(): Promise<void> {
    await this.upload?.abort().catch(() => {});
  }
}
