/**
 * Affine matrices and axis-aligned boxes for placing glyphs in device space (ISO 32000-1 §8.3.4):
 * a matrix [a b c d e f] maps a row vector (x y 1) to (ax + cy + e, bx + dy + f).
 */
import type { PdfObj, PdfResolver } from "./objects";

export type Matrix = readonly [number, number, number, number, number, number];

/** [x0 y0 x1 y1] with x0 <= x1 and y0 <= y1; a box with x0 > x1 or y0 > y1 holds nothing. */
export type Box = readonly [number, number, number, number];

export const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** `m` applied first, then `n` (so `cm` makes the CTM multiply(cm, ctm)). */
export function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

/** Bounds being gathered point by point: [x0 y0 x1 y1], empty (x0 > x1) until a point is added. */
export type Bounds = [number, number, number, number];

export const emptyBounds = (): Bounds => [Infinity, Infinity, -Infinity, -Infinity];

/** Widens `bounds` in place to hold the point (x, y) mapped by `m`. */
export function growBounds(bounds: Bounds, m: Matrix, x: number, y: number): void {
  const tx = m[0] * x + m[2] * y + m[4];
  const ty = m[1] * x + m[3] * y + m[5];
  bounds[0] = Math.min(bounds[0], tx);
  bounds[1] = Math.min(bounds[1], ty);
  bounds[2] = Math.max(bounds[2], tx);
  bounds[3] = Math.max(bounds[3], ty);
}

/** The bounding box of `b`'s corners mapped by `m`. */
export function transformBox(b: Box, m: Matrix): Box {
  const bounds = emptyBounds();
  growBounds(bounds, m, b[0], b[1]);
  growBounds(bounds, m, b[2], b[1]);
  growBounds(bounds, m, b[0], b[3]);
  growBounds(bounds, m, b[2], b[3]);
  return bounds;
}

/** `a` within `b`; null stands for no bound at all. */
export function intersect(a: Box | null, b: Box | null): Box | null {
  if (!a) return b;
  if (!b) return a;
  return [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
}

async function numbers(doc: PdfResolver, o: PdfObj | undefined, length: number): Promise<number[] | null> {
  const a = await doc.resolve(o);
  if (!Array.isArray(a) || a.length !== length) return null;
  const out: number[] = [];
  for (const e of a) {
    const v = await doc.resolve(e);
    if (typeof v !== "number" || !Number.isFinite(v)) return null;
    out.push(v);
  }
  return out;
}

/** A rectangle (§7.9.5: any two opposite corners) as a box, or null when it is not one. */
export async function readBox(doc: PdfResolver, o: PdfObj | undefined): Promise<Box | null> {
  const n = await numbers(doc, o, 4);
  return n && [Math.min(n[0], n[2]), Math.min(n[1], n[3]), Math.max(n[0], n[2]), Math.max(n[1], n[3])];
}

export async function readMatrix(doc: PdfResolver, o: PdfObj | undefined): Promise<Matrix | null> {
  const n = await numbers(doc, o, 6);
  return n && [n[0], n[1], n[2], n[3], n[4], n[5]];
}
