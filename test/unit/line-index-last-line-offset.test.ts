// An offset one byte past the last line of a file that ends in a newline is past that line's end,
// as the same offset on a middle line is, however far the line runs past its checkpoint; an offset
// at the end of a last line with no newline after it reads on to nothing, as a middle line's does.
import { describe, expect, it } from "vitest";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { LineIndexer, readLines } from "../../services/attachments/formats/text/line-index";

async function read(text: string, at: { line: number; skipBytes: number }) {
  const bytes = new TextEncoder().encode(text);
  // markBytes 4 stands in for the 1 MiB byte checkpoints: the long line ends far past its own.
  const indexer = new LineIndexer(1000, { markBytes: 4 });
  indexer.push(bytes);
  const index = indexer.finish();
  return readLines(memoryRangeReader(bytes), { index, from: at.line, to: at.line, skipBytes: at.skipBytes });
}

describe("an offset at the end of the file", () => {
  it("one past the last line's newline is past the line, as on a middle line", async () => {
    expect((await read("0123456789\nab\n", { line: 1, skipBytes: 11 })).offsetPastLine).toBe(true);
    expect((await read("ab\n0123456789\n", { line: 2, skipBytes: 11 })).offsetPastLine).toBe(true);
  });

  it("at the end of a last line with no newline reads nothing, and is no error", async () => {
    const r = await read("ab\n0123456789", { line: 2, skipBytes: 10 });
    expect(r.offsetPastLine).toBeUndefined();
    expect(r.lines).toEqual([""]);
  });

  it("inside the last line still reads its rest", async () => {
    const r = await read("ab\n0123456789\n", { line: 2, skipBytes: 7 });
    expect(r.lines).toEqual(["789"]);
  });
});
