// Every stream filter stops at the decode limit it is given: exactly the limit decodes, one byte more
// is a PdfTooLarge naming that limit, and what a decode returns sits in one buffer no larger than
// the limit (no list of chunks beside a joined copy, no array of numbers eight bytes a byte).
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeStream, MAX_DECODED_BYTES } from "../../services/attachments/formats/pdf/filters";
import { PdfDict, PdfError, PdfName, type PdfObj, PdfTooLarge } from "../../services/attachments/formats/pdf/objects";

const LIMIT = 256 * 1024;

const dict = (filter: string, parms?: Record<string, number>) =>
  new PdfDict(
    new Map<string, PdfObj>([
      ["Filter", new PdfName(filter)],
      ...(parms
        ? [["DecodeParms", new PdfDict(new Map(Object.entries(parms)))] as [string, PdfObj]]
        : ([] as [string, PdfObj][])),
    ]),
  );

/** LZW codes (9 bits, EarlyChange 1) for `bytes`, one literal code each, clearing the table often. */
function lzw(bytes: Uint8Array): Uint8Array {
  const codes: number[] = [256];
  bytes.forEach((b, i) => {
    codes.push(b);
    if (i % 200 === 199) codes.push(256);
  });
  codes.push(257);
  const out = new Uint8Array(Math.ceil((codes.length * 9) / 8) + 1);
  let bit = 0;
  for (const c of codes) {
    for (let k = 8; k >= 0; k--, bit++) if ((c >> k) & 1) out[bit >> 3] |= 0x80 >> (bit & 7);
  }
  return out;
}

/** Each filter's encoding of `n` bytes (the letter A, or zeros where the filter says so). */
const encodings: { name: string; dict: PdfDict; encode: (n: number) => Uint8Array }[] = [
  {
    name: "FlateDecode",
    dict: dict("FlateDecode"),
    encode: (n) => new Uint8Array(deflateSync(new Uint8Array(n).fill(65))),
  },
  { name: "LZWDecode", dict: dict("LZWDecode"), encode: (n) => lzw(new Uint8Array(n).fill(65)) },
  {
    name: "RunLengthDecode",
    dict: dict("RunLengthDecode"),
    encode: (n) => {
      const out: number[] = [];
      for (let left = n; left > 0; left -= Math.min(128, left)) out.push(257 - Math.min(128, left), 65);
      return Uint8Array.from([...out, 128]);
    },
  },
  {
    name: "ASCIIHexDecode",
    dict: dict("ASCIIHexDecode"),
    encode: (n) => new Uint8Array(Buffer.from(`${"41".repeat(n)}>`, "latin1")),
  },
  {
    name: "ASCII85Decode",
    dict: dict("ASCII85Decode"),
    // "z" is four zero bytes.
    encode: (n) => new Uint8Array(Buffer.from(`${"z".repeat(n / 4)}~>`, "latin1")),
  },
  {
    name: "FlateDecode with a PNG predictor",
    dict: dict("FlateDecode", { Predictor: 12, Columns: 4 }),
    // Rows of a type byte (0, none) and four data bytes.
    encode: (n) => {
      const rows = new Uint8Array((n / 4) * 5);
      for (let r = 0; r < n / 4; r++) rows.fill(65, r * 5 + 1, r * 5 + 5);
      return new Uint8Array(deflateSync(rows));
    },
  },
];

describe("a stream decodes up to its limit, and no further", () => {
  // A predictor's input has a tag byte a row more than its output, and both stages keep to the
  // limit: its exact-limit case is not one.
  const exact = encodings.filter((e) => !e.name.includes("predictor"));
  it.each(exact)("$name: exactly the limit decodes, into one buffer no larger than it", async ({ dict, encode }) => {
    const out = await decodeStream(dict, encode(LIMIT), LIMIT);
    expect(out.length).toBe(LIMIT);
    expect(out.buffer.byteLength).toBeLessThanOrEqual(LIMIT);
  });

  it.each(encodings)("$name: past the limit is a PdfTooLarge naming it", async ({ dict, encode }) => {
    const err = await decodeStream(dict, encode(LIMIT + 4), LIMIT).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PdfError);
    expect(err).toBeInstanceOf(PdfTooLarge);
    expect((err as PdfTooLarge).limit).toBe(LIMIT);
  });

  it("unfiltered data longer than the limit is refused the same way", async () => {
    const err = await decodeStream(new PdfDict(), new Uint8Array(LIMIT + 1), LIMIT).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PdfTooLarge);
  });

  it("predictors are undone in place, right for every row type", async () => {
    // TIFF (2): each byte adds the one before it in the row.
    const tiff = await decodeStream(
      dict("FlateDecode", { Predictor: 2, Columns: 3 }),
      new Uint8Array(deflateSync(Uint8Array.of(10, 5, 3, 1, 1, 1))),
    );
    expect([...tiff]).toEqual([10, 15, 18, 1, 2, 3]);
    // PNG: None, Sub, Up, Average, Paeth rows of two bytes.
    const rows = Uint8Array.of(0, 10, 20, 1, 5, 5, 2, 1, 1, 3, 1, 1, 4, 2, 2);
    const png = await decodeStream(
      dict("FlateDecode", { Predictor: 12, Columns: 2 }),
      new Uint8Array(deflateSync(rows)),
    );
    // Sub: 5, 10; Up: 6, 11; Average: 1 + (0 + 6) / 2 = 4, 1 + (4 + 11) / 2 = 8; Paeth picks b: 6, 10.
    expect([...png]).toEqual([10, 20, 5, 10, 6, 11, 4, 8, 6, 10]);
  });

  it("the reader's own limit is 16 MB", () => {
    expect(MAX_DECODED_BYTES).toBe(16 * 1024 * 1024);
  });
});
