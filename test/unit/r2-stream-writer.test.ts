// The export writer's multipart parts: every part but the last exactly PART_BYTES and the last no
const PART_BYTES = 5 * 1024 * 1024;
// larger (R2 refuses to complete anything else), the bytes in order, whatever the pieces written.
import { describe, expect, it } from "vitest";
import { R2StreamWriter } from "../../services/transfer/r2-stream-writer";

/** A bucket that keeps what the writer sends: single puts and the parts of one multipart upload. */
function recordingBucket() {
  const seen = {
    puts: [] as Uint8Array[],
    parts: [] as { n: number; body: Uint8Array }[],
    completed: null as number[] | null,
    aborted: false,
  };
  const bucket = {
    async put(_key: string, body: Uint8Array) {
      seen.puts.push(body);
      return {};
    },
    async createMultipartUpload() {
      return {
        async uploadPart(n: number, body: Uint8Array) {
          seen.parts.push({ n, body: body.slice() });
          return { partNumber: n, etag: `e${n}` };
        },
        async complete(parts: { partNumber: number }[]) {
          seen.completed = parts.map((p) => p.partNumber);
          return {};
        },
        async abort() {
          seen.aborted = true;
        },
      };
    },
  };
  return { bucket: bucket as unknown as R2Bucket, seen };
}

const joined = (arrays: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(arrays));

describe("R2StreamWriter", () => {
  it("cuts parts of exactly PART_BYTES from pieces of any size, the last part no larger", async () => {
    const { bucket, seen } = recordingBucket();
    const writer = new R2StreamWriter(bucket, "k", "application/x-ndjson");
    // Pieces that straddle every part boundary, one of them longer than a whole part.
    const pieces = [3_000_001, 3_000_001, 7 * 1024 * 1024 + 17, 1, 999_999, 2_500_000].map((n, i) =>
      String.fromCharCode(97 + i).repeat(n),
    );
    for (const p of pieces) await writer.write(p);
    await writer.close();
    const total = pieces.reduce((n, p) => n + p.length, 0);
    expect(writer.bytes).toBe(total);
    const sizes = seen.parts.map((p) => p.body.length);
    expect(sizes.length).toBe(Math.ceil(total / PART_BYTES));
    for (const s of sizes.slice(0, -1)) expect(s).toBe(PART_BYTES);
    expect(sizes.at(-1)).toBe(total - PART_BYTES * (sizes.length - 1));
    expect(seen.parts.map((p) => p.n)).toEqual(sizes.map((_, i) => i + 1));
    expect(seen.completed).toEqual(sizes.map((_, i) => i + 1));
    expect(joined(seen.parts.map((p) => p.body)) === pieces.join("")).toBe(true);
    expect(seen.puts).toEqual([]);
  });

  it("ends on a full part without an empty last part", async () => {
    const { bucket, seen } = recordingBucket();
    const writer = new R2StreamWriter(bucket, "k", "application/x-ndjson");
    await writer.write("x".repeat(PART_BYTES - 1));
    await writer.write("yz");
    await writer.write("w".repeat(PART_BYTES - 1));
    await writer.close();
    expect(seen.parts.map((p) => p.body.length)).toEqual([PART_BYTES, PART_BYTES]);
    expect(seen.completed).toEqual([1, 2]);
  });

  it("writes an object smaller than one part with a single put", async () => {
    const { bucket, seen } = recordingBucket();
    const writer = new R2StreamWriter(bucket, "k", "application/x-ndjson");
    await writer.write("one\n");
    await writer.write("two\n");
    await writer.close();
    expect(seen.parts).toEqual([]);
    expect(seen.puts.map((b) => new TextDecoder().decode(b))).toEqual(["one\ntwo\n"]);
  });
});
