// Boundaries of the PDF page reader and of the R2 range reader under it: a page that uses up the
// whole character budget ends the read there (truncated, the next page never read), and a read
// running past an object's end asks R2 for exactly the bytes left. (The fold's boundary, a reply
// exactly at its cap, needs the conversation object: test/workers/outbox-and-turn-boundaries.test.ts.)
import { describe, expect, it } from "vitest";
import { readPdfPages } from "../../services/attachments/formats/pdf/read";
import { r2RangeReader } from "../../services/attachments/r2-range-reader";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { kumquatPdf } from "./pdf-builders";

describe("a PDF read whose first page is exactly the character budget", () => {
  it("stops there, truncated, without reading page 2", async () => {
    const bytes = await kumquatPdf(3, false);
    const first = await readPdfPages(memoryRangeReader(bytes), { from: 1, to: 1 });
    const maxChars = first.pages[0].text.length;
    expect(maxChars).toBeGreaterThan(0);
    const out = await readPdfPages(memoryRangeReader(bytes), { from: 1, to: 3, maxChars });
    expect(out.pages).toEqual([{ page: 1, text: first.pages[0].text }]);
    expect(out.truncated).toBe(true);
  });
});

describe("a ranged read over an R2 object that runs past its end", () => {
  it("asks for the bytes left, and no more", async () => {
    const data = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const gets: { key: string; range: unknown }[] = [];
    const bucket = {
      head: async (key: string) => (key === "obj" ? { size: data.length } : null),
      get: async (key: string, opts: { range: { offset: number; length: number } }) => {
        gets.push({ key, range: opts.range });
        const { offset, length } = opts.range;
        const slice = data.slice(offset, offset + length);
        return { arrayBuffer: async () => slice.buffer };
      },
    } as unknown as R2Bucket;
    const reader = await r2RangeReader(bucket, "obj");
    const bytes = await reader!.read(5, 100);
    expect(gets).toEqual([{ key: "obj", range: { offset: 5, length: 5 } }]);
    expect([...bytes]).toEqual([5, 6, 7, 8, 9]);
    expect(reader!.bytesRead).toBe(5);
  });
});
