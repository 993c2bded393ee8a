// The line reader's bounded work: a read-on inside one long line jumps to its offset instead of
// reading the bytes before it, byte-based checkpoints make a line after a huge one reachable, an
// offset past a line's end is told apart, and file_read never answers "read on" with the same call.
import { strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { fileRead } from "../../agent/tools/attachment-tools";
import type { AttachmentAccess } from "../../agent/tools/registry";
import { memoryRangeReader, type RangeReader } from "../../services/attachments/formats/shared/range-reader";
import { LineIndexer, readLines, type LineIndex } from "../../services/attachments/formats/text/line-index";

const KiB = 1024;

function indexOf(bytes: Uint8Array, markBytes: number): LineIndex {
  const ix = new LineIndexer(1000, { markBytes });
  for (let i = 0; i < bytes.length; i += 4096) ix.push(bytes.subarray(i, i + 4096));
  return ix.finish();
}

describe("line reads past the scan cap", () => {
  it("reads on inside one long line by jumping to the offset, not reading the bytes before it", async () => {
    const line = `${"a".repeat(200_000)}TAIL`;
    const bytes = strToU8(`${line}\nnext\n`);
    const index = indexOf(bytes, 16 * KiB);
    const r = memoryRangeReader(bytes);
    const out = await readLines(r, {
      index,
      from: 1,
      to: 1,
      skipBytes: 199_996,
      maxScanBytes: 64 * KiB,
      chunkBytes: 4096,
    });
    expect(out.lines).toEqual(["aaaaTAIL"]);
    expect(out.truncated).toBe(false);
    expect(r.bytesRead).toBeLessThan(32 * KiB);
    // Inside a character: on to the next one's start, and the skipped byte is counted.
    const wide = strToU8(`${"é".repeat(100_000)}END\n`);
    const wideOut = await readLines(memoryRangeReader(wide), {
      index: indexOf(wide, 16 * KiB),
      from: 1,
      to: 1,
      skipBytes: 199_993,
      maxBytes: 5,
      maxScanBytes: 64 * KiB,
    });
    expect(wideOut.lines).toEqual(["éé"]);
    expect(wideOut.cutAtByte).toBe(199_994 + 4);
  });

  it("reaches the line after a line longer than the scan cap through a byte-based checkpoint", async () => {
    const bytes = strToU8(`${"a".repeat(200_000)}\nTWO\nthree\n`);
    const index = indexOf(bytes, 16 * KiB);
    expect(index.lines).toBe(3);
    const r = memoryRangeReader(bytes);
    const out = await readLines(r, { index, from: 2, to: 3, maxScanBytes: 64 * KiB, chunkBytes: 4096 });
    expect(out.lines).toEqual(["TWO", "three"]);
    expect(r.bytesRead).toBeLessThan(16 * KiB);
  });

  it("says when the offset is past the line's end, and not when it is at its end", async () => {
    const short = strToU8("abc\ndef\n");
    const past = await readLines(memoryRangeReader(short), {
      index: indexOf(short, 16 * KiB),
      from: 1,
      to: 2,
      skipBytes: 50,
    });
    expect(past).toMatchObject({ lines: [], offsetPastLine: true });
    const atEnd = await readLines(memoryRangeReader(short), {
      index: indexOf(short, 16 * KiB),
      from: 1,
      to: 2,
      skipBytes: 3,
    });
    expect(atEnd.lines).toEqual(["", "def"]);
    // Told by a checkpoint past the line's start, without reading the line.
    const long = strToU8(`${"a".repeat(100_000)}\nbbbbbbbbbb\n`);
    const r = memoryRangeReader(long);
    const out = await readLines(r, { index: indexOf(long, 16 * KiB), from: 1, to: 2, skipBytes: 100_005 });
    expect(out).toMatchObject({ lines: [], offsetPastLine: true });
    expect(r.bytesRead).toBeLessThan(32 * KiB);
  });
});

describe("U+FEFF in a line", () => {
  it("is kept at the start of a read-on piece and of a later line, dropped only at the file's start", async () => {
    const line = `${"a".repeat(300)}\uFEFFzz`;
    const bytes = strToU8(`\uFEFF${line}\n\uFEFFtwo\n`);
    const index = indexOf(bytes, 16 * KiB);
    const whole = await readLines(memoryRangeReader(bytes), { index, from: 1, to: 2, maxBytes: 200 });
    expect(whole.lines[0]).toBe("a".repeat(197));
    const pieces = [whole.lines[0]];
    let skipBytes = whole.cutAtByte;
    while (skipBytes !== undefined) {
      const out = await readLines(memoryRangeReader(bytes), { index, from: 1, to: 2, maxBytes: 103, skipBytes });
      pieces.push(out.lines[0]);
      skipBytes = out.cutAtByte;
      if (skipBytes === undefined) expect(out.lines[1]).toBe("\uFEFFtwo");
    }
    expect(pieces[pieces.length - 1].startsWith("\uFEFF")).toBe(true);
    expect(pieces.join("")).toBe(line);
  });
});

/** A text file of `size` bytes of "a" with "\nLAST" at its end, made on demand. */
function lazyText(size: number): RangeReader {
  const tail = strToU8("\nLAST");
  return {
    size,
    async read(offset: number, length: number) {
      const end = Math.min(size, offset + length);
      const out = new Uint8Array(Math.max(0, end - offset)).fill(0x61);
      for (let i = Math.max(offset, size - tail.length); i < end; i++) out[i - offset] = tail[i - (size - tail.length)];
      return out;
    },
  };
}

describe("file_read when nothing could be read", () => {
  it("is an error, never a read-on naming the same call", async () => {
    const size = 33 * 1024 * KiB;
    // An index without byte-based checkpoints: line 2 is past the scan cap from the only checkpoint.
    const index: LineIndex = { lines: 2, bytes: size, every: 1000, offsets: [0] };
    const reader = lazyText(size);
    const ctx = {
      openAttachment: async () => ({
        attachment: {
          id: "att_1",
          conversationId: "conv_1",
          name: "dump.txt",
          type: "text/plain",
          size,
          status: "ready",
          facts: { kind: "text", lines: 2 },
          createdAt: "2026-01-01T00:00:00.000Z",
        },
        reader,
        text: async () => ({ index, reader }),
      }),
    } as unknown as AttachmentAccess;
    const out = await fileRead.run({ attachment_id: "att_1", lines: "2" }, ctx);
    expect(out.isError).toBe(true);
    expect(out.content).not.toContain("read on with file_read");
    expect(out.content).toContain("line 2");
  });
});
