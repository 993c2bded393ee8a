/**
 * Cross-reference sections (ISO 32000-1 §7.5.4, §7.5.8), read lazily.
 *
 * A classic `xref` table is fixed-width (20 bytes an entry), so only its subsection headers are
 * read when the section is opened; entries are fetched in small blocks on lookup. That keeps a
 * 100,000-object table from costing 2 MB of reads. A cross-reference stream has to be inflated
 * whole (it is compressed), but it is compact: a few bytes an object.
 */
import { isInt, PdfError } from "./objects";

export type XrefEntry =
  | { type: 0 } // free
  | { type: 1; offset: number; gen: number } // in use, at a byte offset
  | { type: 2; stream: number; index: number }; // in use, inside an object stream

export interface XrefSection {
  /** The entry for `num`, or undefined when this section does not mention the object. */
  lookup(num: number): Promise<XrefEntry | undefined>;
  /** The smallest object offset this section knows of that is greater than `offset`. */
  nextOffsetAfter(offset: number): number | undefined;
}

export type ReadFn = (offset: number, length: number) => Promise<Uint8Array>;

const ENTRIES_PER_BLOCK = 64;
const MAX_SUBSECTION_COUNT = 10_000_000;

interface Subsection {
  start: number;
  count: number;
  /** File offset of the first entry. */
  offset: number;
  stride: number;
  /** Eagerly parsed entries (irregular tables): offsets/gens, type in `types` (0 free, 1 used). */
  eager?: { offsets: Float64Array; gens: Uint32Array; types: Uint8Array };
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Does `b[at..]` look like a standard 20-byte (or 19-byte) xref entry? Returns the stride or 0. */
export function entryStride(b: Uint8Array, at: number): number {
  if (at + 19 > b.length) return 0;
  for (let i = 0; i < 10; i++) if (!isDigit(b[at + i])) return 0;
  if (b[at + 10] !== 32) return 0;
  for (let i = 11; i < 16; i++) if (!isDigit(b[at + i])) return 0;
  if (b[at + 16] !== 32) return 0;
  if (b[at + 17] !== 0x6e && b[at + 17] !== 0x66) return 0;
  const c18 = b[at + 18];
  const c19 = at + 19 < b.length ? b[at + 19] : -1;
  if ((c18 === 32 || c18 === 13) && (c19 === 10 || c19 === 13)) return 20;
  if ((c18 === 10 || c18 === 13) && (c19 === -1 || isDigit(c19) || c19 === 116 /* t */ || c19 === 32 || c19 === 10))
    return 19;
  return 0;
}

function parseEntry(b: Uint8Array, at: number): XrefEntry | null {
  let off = 0;
  for (let i = 0; i < 10; i++) {
    const c = b[at + i];
    if (!isDigit(c)) return null;
    off = off * 10 + (c - 48);
  }
  let gen = 0;
  for (let i = 11; i < 16; i++) {
    const c = b[at + i];
    if (!isDigit(c)) return null;
    gen = gen * 10 + (c - 48);
  }
  const t = b[at + 17];
  if (t === 0x66) return { type: 0 };
  if (t !== 0x6e) return null;
  return off === 0 ? { type: 0 } : { type: 1, offset: off, gen };
}

/** A classic table section; subsections are discovered by `openClassicSection`. */
export class ClassicSection implements XrefSection {
  private blocks = new Map<string, Uint8Array>();
  private pending = new Map<string, Promise<Uint8Array>>();
  constructor(
    private readonly subsections: Subsection[],
    private readonly read: ReadFn,
  ) {}

  async lookup(num: number): Promise<XrefEntry | undefined> {
    // Later subsections win over earlier ones (a table may repeat an object).
    for (let s = this.subsections.length - 1; s >= 0; s--) {
      const sub = this.subsections[s];
      if (num < sub.start || num >= sub.start + sub.count) continue;
      const row = num - sub.start;
      if (sub.eager) {
        if (sub.eager.types[row] !== 1) return { type: 0 };
        return { type: 1, offset: sub.eager.offsets[row], gen: sub.eager.gens[row] };
      }
      const block = Math.floor(row / ENTRIES_PER_BLOCK);
      const key = `${s}:${block}`;
      let bytes = this.blocks.get(key);
      if (!bytes) {
        // Concurrent lookups (prefetching) share one read of a block.
        let pending = this.pending.get(key);
        if (!pending) {
          const first = block * ENTRIES_PER_BLOCK;
          const n = Math.min(ENTRIES_PER_BLOCK, sub.count - first);
          pending = this.read(sub.offset + first * sub.stride, n * sub.stride);
          this.pending.set(key, pending);
        }
        try {
          bytes = await pending;
        } finally {
          this.pending.delete(key);
        }
        this.blocks.set(key, bytes);
      }
      const at = (row % ENTRIES_PER_BLOCK) * sub.stride;
      const entry = at + 18 <= bytes.length ? parseEntry(bytes, at) : null;
      if (!entry) throw new PdfError(`broken cross-reference table: the entry for object ${num} is malformed`);
      return entry;
    }
    return undefined;
  }

  nextOffsetAfter(offset: number): number | undefined {
    let best: number | undefined;
    for (const [key, bytes] of this.blocks) {
      const sub = this.subsections[Number(key.slice(0, key.indexOf(":")))];
      for (let at = 0; at + 18 <= bytes.length; at += sub.stride) {
        const e = parseEntry(bytes, at);
        if (e?.type === 1 && e.offset > offset && (best === undefined || e.offset < best)) best = e.offset;
      }
    }
    for (const sub of this.subsections) {
      if (!sub.eager) continue;
      for (let i = 0; i < sub.count; i++) {
        const o = sub.eager.offsets[i];
        if (sub.eager.types[i] === 1 && o > offset && (best === undefined || o < best)) best = o;
      }
    }
    return best;
  }
}

/**
 * Reads the subsection headers of a classic table that starts (after the `xref` keyword) at
 * `pos`. Returns the section and the file offset of the `trailer` keyword.
 */
export async function openClassicSection(
  read: ReadFn,
  { fileSize, pos, initial }: { fileSize: number; pos: number; initial?: { at: number; bytes: Uint8Array } },
): Promise<{ section: ClassicSection; trailerAt: number; trailerWindow: Uint8Array }> {
  const subs: Subsection[] = [];
  // A small read-ahead window: tables with many short subsections cost one read per 4 KB,
  // and a long subsection is skipped over without reading its entries.
  let win = initial?.bytes ?? new Uint8Array(0);
  let winAt = initial?.at ?? 0;
  const view = async (at: number, need: number): Promise<[Uint8Array, number]> => {
    if (at < winAt || at + need > winAt + win.length) {
      if (!(winAt + win.length >= fileSize && at >= winAt && at <= winAt + win.length)) {
        win = await read(at, Math.max(need, 4096));
        winAt = at;
      }
    }
    return [win, at - winAt];
  };
  for (let guard = 0; ; guard++) {
    if (guard > 1_000_000) throw new PdfError("broken cross-reference table: too many subsections");
    const [w, base] = await view(pos, 64);
    let i = base;
    while (i < w.length && (w[i] === 32 || w[i] === 10 || w[i] === 13 || w[i] === 9 || w[i] === 12)) i++;
    if (i >= w.length) throw new PdfError("broken cross-reference table: it ends before its trailer");
    if (w[i] === 0x74 /* t */) {
      if (String.fromCharCode(...w.subarray(i, i + 7)) !== "trailer")
        throw new PdfError("broken cross-reference table: expected a trailer");
      return { section: new ClassicSection(subs, read), trailerAt: winAt + i, trailerWindow: w.subarray(i) };
    }
    const nums: number[] = [];
    for (let k = 0; k < 2; k++) {
      if (!isDigit(w[i])) throw new PdfError("broken cross-reference table: expected a subsection header");
      let v = 0;
      let digits = 0;
      while (i < w.length && isDigit(w[i])) {
        v = v * 10 + (w[i++] - 48);
        if (++digits > 10) throw new PdfError("broken cross-reference table: bad subsection header");
      }
      nums.push(v);
      while (i < w.length && (w[i] === 32 || w[i] === 9)) i++;
    }
    while (i < w.length && (w[i] === 32 || w[i] === 10 || w[i] === 13)) i++;
    const [start, count] = nums;
    if (count > MAX_SUBSECTION_COUNT || start > MAX_SUBSECTION_COUNT)
      throw new PdfError("broken cross-reference table: implausible subsection size");
    const entriesAt = winAt + i;
    if (count === 0) {
      pos = entriesAt;
      continue;
    }
    const [fw, fi] = await view(entriesAt, 21);
    const stride = entryStride(fw, fi);
    if (stride) {
      const end = entriesAt + count * stride;
      if (end > fileSize) throw new PdfError("broken cross-reference table: it runs past the end of the file");
      // The last entry must sit where a fixed stride puts it; otherwise parse eagerly.
      const [lw, li] = await view(end - stride, stride + 256);
      if (entryStride(lw, li) === stride) {
        subs.push({ start, count, offset: entriesAt, stride });
        pos = end;
        continue;
      }
    }
    const eager = await parseEagerly(read, { fileSize, at: entriesAt, count });
    subs.push({ start, count, offset: entriesAt, stride: 0, eager: eager.entries });
    pos = eager.end;
  }
}

/** Irregularly formatted entries: read the subsection whole (bounded) and tokenize it. */
async function parseEagerly(read: ReadFn, { fileSize, at, count }: { fileSize: number; at: number; count: number }) {
  const maxBytes = Math.min(fileSize - at, count * 40 + 64);
  if (maxBytes > 16 * 1024 * 1024) throw new PdfError("broken cross-reference table: an irregular table is too large");
  const b = await read(at, maxBytes);
  const offsets = new Float64Array(count);
  const gens = new Uint32Array(count);
  const types = new Uint8Array(count);
  let i = 0;
  const ws = () => {
    while (i < b.length && (b[i] === 32 || b[i] === 10 || b[i] === 13 || b[i] === 9 || b[i] === 12)) i++;
  };
  const int = () => {
    ws();
    if (!isDigit(b[i])) throw new PdfError("broken cross-reference table: malformed entry");
    let v = 0;
    while (i < b.length && isDigit(b[i])) v = v * 10 + (b[i++] - 48);
    return v;
  };
  for (let row = 0; row < count; row++) {
    const off = int();
    const gen = int();
    ws();
    const t = b[i++];
    if (t !== 0x6e && t !== 0x66) throw new PdfError("broken cross-reference table: malformed entry");
    offsets[row] = off;
    gens[row] = gen;
    types[row] = t === 0x6e && off > 0 ? 1 : 0;
  }
  return { entries: { offsets, gens, types }, end: at + i };
}

/** A decoded cross-reference stream. */
export class StreamSection implements XrefSection {
  private readonly rowSize: number;
  private readonly ranges: { start: number; count: number; row: number }[] = [];
  private sorted: Float64Array | null = null;

  constructor(
    private readonly data: Uint8Array,
    private readonly w: [number, number, number],
    index: number[],
  ) {
    this.rowSize = w[0] + w[1] + w[2];
    let row = 0;
    for (let i = 0; i + 1 < index.length; i += 2) {
      this.ranges.push({ start: index[i], count: index[i + 1], row });
      row += index[i + 1];
    }
  }

  static create(
    data: Uint8Array,
    { wRaw, indexRaw, size }: { wRaw: unknown; indexRaw: unknown; size: number },
  ): StreamSection {
    if (!Array.isArray(wRaw) || wRaw.length < 3 || !wRaw.slice(0, 3).every((v) => isInt(v) && v >= 0 && v <= 8)) {
      throw new PdfError("broken cross-reference stream: bad /W");
    }
    const w = wRaw.slice(0, 3) as [number, number, number];
    if (w[0] + w[1] + w[2] === 0) throw new PdfError("broken cross-reference stream: bad /W");
    let index: number[];
    if (indexRaw === undefined || indexRaw === null) index = [0, size];
    else if (
      Array.isArray(indexRaw) &&
      indexRaw.length % 2 === 0 &&
      indexRaw.every((v) => isInt(v) && v >= 0 && v <= MAX_SUBSECTION_COUNT)
    )
      index = indexRaw as number[];
    else throw new PdfError("broken cross-reference stream: bad /Index");
    return new StreamSection(data, w, index);
  }

  private field(at: number, width: number): number {
    let v = 0;
    for (let i = 0; i < width; i++) v = v * 256 + this.data[at + i];
    return v;
  }

  private entryAtRow(row: number): XrefEntry | undefined {
    const at = row * this.rowSize;
    if (at + this.rowSize > this.data.length) return undefined; // short stream: entry missing
    const [w0, w1, w2] = this.w;
    const type = w0 === 0 ? 1 : this.field(at, w0);
    const f2 = this.field(at + w0, w1);
    const f3 = this.field(at + w0 + w1, w2);
    if (type === 1) return f2 === 0 ? { type: 0 } : { type: 1, offset: f2, gen: f3 };
    if (type === 2) return { type: 2, stream: f2, index: f3 };
    return { type: 0 }; // type 0 free; unknown types are treated as null references (§7.5.8.3)
  }

  async lookup(num: number): Promise<XrefEntry | undefined> {
    for (let r = this.ranges.length - 1; r >= 0; r--) {
      const { start, count, row } = this.ranges[r];
      if (num >= start && num < start + count) return this.entryAtRow(row + (num - start));
    }
    return undefined;
  }

  nextOffsetAfter(offset: number): number | undefined {
    if (!this.sorted) {
      const rows = Math.floor(this.data.length / this.rowSize);
      const offs: number[] = [];
      for (let r = 0; r < rows; r++) {
        const e = this.entryAtRow(r);
        if (e?.type === 1) offs.push(e.offset);
      }
      this.sorted = Float64Array.from(offs).sort();
    }
    const s = this.sorted;
    let lo = 0;
    let hi = s.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (s[mid] <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < s.length ? s[lo] : undefined;
  }
}
