// Image uploads the model must still be able to reach: a JPEG whose frame header sits past 256 KB
// of ICC metadata gets its real dimensions; an SVG is text that file_read reads; an image the model
// cannot be shown (HEIC, BMP, over 8000 px or 5 MB) gets a note that never sends it to image_view.
import { strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { imageInfoFromReader } from "../../services/attachments/formats/image/image-info";
import { inspectAttachment } from "../../services/attachments/inspect";
import { attachmentNote } from "../../services/attachments/note";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { LineIndexer } from "../../services/attachments/formats/text/line-index";
import { u8 } from "./format-bytes";
import { pngHead } from "./image-bytes";

const be16 = (n: number) => [(n >>> 8) & 255, n & 255];
const segment = (marker: number, payload: Uint8Array) => u8([0xff, marker], be16(payload.length + 2), payload);

/** A JPEG with `icc` bytes of APP2 (ICC profile) segments before its frame header. */
function iccJpeg(width: number, height: number, icc: number): Uint8Array {
  const apps: Uint8Array[] = [];
  for (let left = icc; left > 0; left -= 65_000) apps.push(segment(0xe2, new Uint8Array(Math.min(65_000, left))));
  return u8(
    [0xff, 0xd8],
    segment(0xe0, u8("JFIF\0", [1, 1, 0, 0, 1, 0, 1, 0, 0])),
    ...apps,
    segment(0xc0, u8([8], be16(height), be16(width), [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])),
    segment(0xda, new Uint8Array(10)),
    [0xff, 0xd9],
  );
}

async function uploadNote(name: string, declared: string | null, bytes: Uint8Array) {
  const indexer = new LineIndexer();
  indexer.push(bytes);
  const index = indexer.finish();
  const { type, facts } = await inspectAttachment(memoryRangeReader(bytes), {
    name,
    declaredType: declared,
    text: async () => ({ index, reader: memoryRangeReader(bytes) }),
  });
  return { type, facts, note: attachmentNote({ id: "att_1", name, type, size: bytes.length, facts }) };
}

const SVG = strToU8(
  '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text x="1" y="9">kumquat</text></svg>\n',
);

describe("image attachments the model can reach", () => {
  it("measures a JPEG whose frame header lies past 256 KB of ICC metadata, reading windows, not the whole file", async () => {
    const bytes = iccJpeg(4032, 3024, 400_000);
    const r = memoryRangeReader(bytes);
    expect(await imageInfoFromReader(r)).toEqual({ format: "jpeg", width: 4032, height: 3024 });
    const { facts, note } = await uploadNote("photo.jpg", "image/jpeg", bytes);
    expect(facts).toEqual({ kind: "image", width: 4032, height: 3024, format: "jpeg" });
    expect(note).not.toContain("could not be inspected");
    expect(note).toContain("image_view");
    // A long ICC profile costs one ranged read per 64 KB segment or so, never a read per byte.
    const huge = memoryRangeReader(iccJpeg(20, 10, 3_000_000));
    expect(await imageInfoFromReader(huge)).toEqual({ format: "jpeg", width: 20, height: 10 });
    expect(huge.calls).toBeLessThan(100);
  });

  it("files an SVG as text that file_read reads, whatever type it is declared with", async () => {
    for (const [name, declared] of [
      ["logo.svg", "image/svg+xml"],
      ["logo", "image/svg+xml"],
      ["logo.svg", "application/octet-stream"],
    ] as const) {
      const { type, facts, note } = await uploadNote(name, declared, SVG);
      expect(facts.kind, `${name} ${declared}`).toBe("text");
      expect(type).toBe("image/svg+xml");
      expect(note).toContain('file_read {"attachment_id":"att_1"');
      expect(note).not.toContain("image_view");
    }
  });

  it("never points at image_view for an image the model cannot be shown", async () => {
    const heic = u8([0, 0, 0, 24], "ftypheic", [0, 0, 0, 0], "mif1heic", new Uint8Array(64));
    const bmp = u8(
      "BM",
      [0, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0],
      [4, 0, 0, 0, 4, 0, 0, 0],
      new Uint8Array(40),
    );
    const cases: [string, string, Uint8Array][] = [
      ["photo.heic", "image/heic", heic],
      ["scan.tiff", "image/tiff", u8("II*\0", new Uint8Array(64))],
      ["paint.bmp", "image/bmp", bmp],
      ["wide.png", "image/png", pngHead(9000, 10)],
      ["big.png", "image/png", pngHead(100, 100, 4_000_000)],
    ];
    for (const [name, declared, bytes] of cases) {
      const { note, facts } = await uploadNote(name, declared, bytes);
      expect(facts.kind, name).toBe("image");
      expect(note, name).not.toContain("image_view");
      expect(note, name).toMatch(/ask the user to send it as a PNG or JPEG/);
    }
    const fine = await uploadNote("ok.png", "image/png", pngHead(800, 600));
    expect(fine.note).toContain('image_view {"attachment_id":"att_1"}');
  });
});
