// Image headers (PNG, GIF, WebP, BMP, JPEG through growing prefixes) and type sniffing by magic
// bytes, extension and declared type.
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { imageInfo, imageInfoFromReader } from "../../services/attachments/formats/image/image-info";
import { sniffType } from "../../services/attachments/formats/sniff";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { lcg, tinyPng, u8 } from "./format-bytes";

const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

const be16 = (n: number) => [(n >>> 8) & 255, n & 255];
const le16 = (n: number) => [n & 255, (n >>> 8) & 255];
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];
const jpegSegment = (marker: number, payload: Uint8Array) => u8([0xff, marker], be16(payload.length + 2), payload);

/** A JPEG header: APP0, `appBytes` of APP1 metadata (in 60 KB segments), DQT, then the frame header. */
function jpeg(width: number, height: number, appBytes: number, sofMarker = 0xc0): Uint8Array {
  const apps: Uint8Array[] = [];
  for (let left = appBytes; left > 0; left -= 60_000)
    apps.push(jpegSegment(0xe1, new Uint8Array(Math.min(60_000, left)).fill(0x45)));
  return u8(
    [0xff, 0xd8],
    jpegSegment(0xe0, u8("JFIF\0", [1, 1, 0, 0, 1, 0, 1, 0, 0])),
    ...apps,
    jpegSegment(0xdb, new Uint8Array(65)),
    jpegSegment(sofMarker, u8([8], be16(height), be16(width), [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])),
    jpegSegment(0xda, new Uint8Array(10)),
    new Uint8Array(100),
    [0xff, 0xd9],
  );
}

// ---------- images and type sniffing ----------

describe("imageInfo", () => {
  it("reads PNG dimensions from the IHDR of a real tiny PNG", () => {
    expect(imageInfo(tinyPng(3, 2))).toEqual({ format: "png", width: 3, height: 2 });
    expect(imageInfo(tinyPng(1920, 1080).subarray(0, 24))).toEqual({ format: "png", width: 1920, height: 1080 });
    expect(imageInfo(tinyPng(3, 2).subarray(0, 20))).toBeNull();
  });

  it("reads GIF, WebP (VP8, VP8L, VP8X) and BMP headers", () => {
    expect(imageInfo(u8("GIF89a", le16(320), le16(200), [0xf7, 0, 0]))).toEqual({
      format: "gif",
      width: 320,
      height: 200,
    });
    expect(imageInfo(u8("GIF87a", le16(1), le16(65535)))).toEqual({ format: "gif", width: 1, height: 65535 });

    const vp8 = u8(
      "RIFF",
      le32(100),
      "WEBP",
      "VP8 ",
      le32(80),
      [0x10, 0x02, 0x00],
      [0x9d, 0x01, 0x2a],
      le16(640),
      le16(480),
    );
    expect(imageInfo(vp8)).toEqual({ format: "webp", width: 640, height: 480 });
    const w = 1000 - 1;
    const h = 750 - 1;
    const bits = (w | (h << 14)) >>> 0;
    const vp8l = u8("RIFF", le32(100), "WEBP", "VP8L", le32(80), [0x2f], le32(bits));
    expect(imageInfo(vp8l)).toEqual({ format: "webp", width: 1000, height: 750 });
    const vp8x = u8(
      "RIFF",
      le32(100),
      "WEBP",
      "VP8X",
      le32(10),
      [0x10, 0, 0, 0],
      [(4000 - 1) & 255, ((4000 - 1) >> 8) & 255, 0],
      [(3000 - 1) & 255, ((3000 - 1) >> 8) & 255, 0],
    );
    expect(imageInfo(vp8x)).toEqual({ format: "webp", width: 4000, height: 3000 });

    const bmp = u8("BM", le32(1000), le32(0), le32(54), le32(40), le32(123), le32(-45 >>> 0), le16(1), le16(24));
    expect(imageInfo(bmp)).toEqual({ format: "bmp", width: 123, height: 45 });
  });

  it("walks JPEG segments to the frame header, including progressive (SOF2)", () => {
    expect(imageInfo(jpeg(640, 480, 0))).toEqual({ format: "jpeg", width: 640, height: 480 });
    expect(imageInfo(jpeg(800, 600, 1000, 0xc2))).toEqual({ format: "jpeg", width: 800, height: 600 });
    // DHT (0xC4) is in the SOF range but is not a frame header.
    const withDht = u8(
      [0xff, 0xd8],
      jpegSegment(0xc4, new Uint8Array(20).fill(0x33)),
      jpegSegment(0xc0, u8([8], be16(7), be16(9), [1, 1, 0x11, 0])),
    );
    expect(imageInfo(withDht)).toEqual({ format: "jpeg", width: 9, height: 7 });
  });

  it("finds a late JPEG frame header by walking its segments, however late, without reading it whole", async () => {
    const late = jpeg(4032, 3024, 150_000);
    expect(imageInfo(late.subarray(0, 4096))).toBeNull();
    const r = memoryRangeReader(late);
    expect(await imageInfoFromReader(r)).toEqual({ format: "jpeg", width: 4032, height: 3024 });
    expect(r.bytesRead).toBeLessThanOrEqual(256 * 1024);

    // Past 256 KB of metadata the header is still found (the entrance and the API read that far).
    const tooLate = memoryRangeReader(jpeg(10, 10, 400_000));
    expect(await imageInfoFromReader(tooLate)).toEqual({ format: "jpeg", width: 10, height: 10 });
    expect(tooLate.calls).toBeLessThanOrEqual(12);

    const png = memoryRangeReader(tinyPng(5, 7));
    expect(await imageInfoFromReader(png)).toEqual({ format: "png", width: 5, height: 7 });
    expect(png.calls).toBe(1);
  });

  it("returns null on garbage without hanging", () => {
    const rand = lcg(7);
    for (let k = 0; k < 200; k++) {
      const junk = Uint8Array.from({ length: 64 + k * 13 }, () => Math.floor(rand() * 256));
      junk.set([0xff, 0xd8, 0xff]);
      const info = imageInfo(junk);
      if (info) expect(info.format).toBe("jpeg");
    }
    expect(imageInfo(u8([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01]))).toBeNull(); // segment length < 2
    expect(imageInfo(strToU8("hello world"))).toBeNull();
    expect(imageInfo(u8("BMhello there, not a bitmap header"))).toBeNull();
  });
});

describe("sniffType", () => {
  const zipBytes = zipSync({ "a.txt": strToU8("x") });
  it("trusts magic bytes over the name and the declared type", () => {
    expect(sniffType(strToU8("%PDF-1.7\n%âãÏÓ"), "report.txt", "text/plain")).toBe("application/pdf");
    expect(sniffType(tinyPng(1, 1), "photo.jpg", "image/jpeg")).toBe("image/png");
    expect(sniffType(jpeg(1, 1, 0), "x", null)).toBe("image/jpeg");
    expect(sniffType(u8("GIF89a", le16(1), le16(1)), "x.bin", null)).toBe("image/gif");
    expect(sniffType(u8("RIFF", le32(4), "WEBP", "VP8L"), "x", null)).toBe("image/webp");
  });

  it("decides ZIP-based office types by extension", () => {
    expect(sniffType(zipBytes, "Budget.XLSX", null)).toBe(XLSX_TYPE);
    expect(sniffType(zipBytes, "letter.docx", "application/octet-stream")).toBe(DOCX_TYPE);
    expect(sniffType(zipBytes, "archive.zip", null)).toBe("application/zip");
    expect(sniffType(zipBytes, "upload", XLSX_TYPE)).toBe(XLSX_TYPE);
  });

  it("falls back to the extension, then the declared type, then octet-stream", () => {
    const text = strToU8("hello, world\n");
    expect(sniffType(text, "notes.md", null)).toBe("text/markdown");
    expect(sniffType(text, "data.csv", "application/vnd.ms-excel")).toBe("text/csv");
    expect(sniffType(text, "data.TSV", null)).toBe("text/tab-separated-values");
    expect(sniffType(text, "a.json", null)).toBe("application/json");
    expect(sniffType(text, "server.log", null)).toBe("text/plain");
    expect(sniffType(text, "main.ts", "video/mp2t")).toBe("text/x-typescript");
    expect(sniffType(text, "script.py", null)).toBe("text/x-python");
    expect(sniffType(text, "thing.custom", "application/x-custom; charset=binary")).toBe("application/x-custom");
    expect(sniffType(text, "README", null)).toBe("application/octet-stream");
    // A declared type whose magic the bytes lack is not believed.
    expect(sniffType(text, "fake.png", "image/png")).toBe("application/octet-stream");
    expect(sniffType(text, "fake.xlsx", XLSX_TYPE)).toBe("application/octet-stream");
  });
});
