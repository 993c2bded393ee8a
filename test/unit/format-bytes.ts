// Byte builders shared by the attachment-format tests: joining parts into bytes, a real tiny PNG,
// and a seeded PRNG.
import { strToU8, zlibSync } from "fflate";

export const u8 = (...parts: (number[] | Uint8Array | string)[]): Uint8Array => {
  const arrays = parts.map((p) =>
    typeof p === "string" ? strToU8(p) : p instanceof Uint8Array ? p : Uint8Array.from(p),
  );
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
};

const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const body = u8(type, data);
  return u8(be32(data.length), body, be32(crc32(body)));
}

/** A complete, valid PNG: RGBA, 8 bits, filter byte 0 on each row. */
export function tinyPng(width: number, height: number): Uint8Array {
  const raw = new Uint8Array(height * (1 + width * 4)).fill(0x7f);
  for (let y = 0; y < height; y++) raw[y * (1 + width * 4)] = 0;
  return u8(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    pngChunk("IHDR", u8(be32(width), be32(height), [8, 6, 0, 0, 0])),
    pngChunk("IDAT", zlibSync(raw)),
    pngChunk("IEND", new Uint8Array(0)),
  );
}

export function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
