/**
 * A PDF opened through ranged reads: the tail (`startxref`), the cross-reference chain
 * (`/Prev`, `/XRefStm`; newest entry wins), then objects on demand, each read with a bounded
 * window at its offset (sized from the next known object offset when the xref tells us one) and
 * grown only when the object is larger. Objects in compressed object streams are supported.
 */
import { decodeStream, MAX_DECODED_BYTES } from "./filters";
import {
  concatBytes,
  indexOf,
  isInt,
  isName,
  lastIndexOf,
  latin1,
  Lexer,
  NeedMoreData,
  parseIndirectHeader,
  parseValue,
  PdfDict,
  PdfError,
  type PdfObj,
  PdfRef,
  PdfStream,
  PdfString,
} from "./objects";
import { openClassicSection, StreamSection, type XrefEntry, type XrefSection } from "./xref";
import type { RangeReader } from "../shared/range-reader";

const TAIL_BYTES = 1024;
const TAIL_BYTES_RETRY = 16 * 1024;
const FIRST_READ = 4096;
const MAX_EXACT_READ = 64 * 1024;
const MAX_OBJECT_BYTES = 8 * 1024 * 1024;
const MAX_STREAM_BYTES = 32 * 1024 * 1024;
const MAX_PREV_HOPS = 64;
const MAX_TREE_DEPTH = 64;
const MAX_PAGES = 10_000_000;
const OBJSTM_CACHE = 8;
const OBJSTM_CACHE_BYTES = 24 * 1024 * 1024;
const OBJECT_CACHE = 20_000;
const OBJECT_CACHE_BYTES = 24 * 1024 * 1024;
/** Object loads one call may make: bounds the work a hostile page tree or reference web can cause. */
const MAX_LOADS = 200_000;
const PREFETCH_MAX = 16;

/** A failure of the underlying reader (storage, network): not a property of the PDF. */
export class RangeReadError extends Error {
  override readonly name = "RangeReadError";
  constructor(cause: unknown) {
    super(`reading the file failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface PageLeaf {
  dict: PdfDict;
  /** The page's /Resources, or the nearest ancestor's (inheritance, §7.7.3.4). */
  resources: PdfDict | null;
}

export class PdfDocument {
  bytesRead = 0;
  version: string | null = null;
  trailer = new PdfDict();
  private sections: XrefSection[] = [];
  private sectionOffsets: number[] = [];
  private cache = new Map<number, PdfObj>();
  private cacheBytes = 0;
  private loads = 0;
  private inProgress = new Set<number>();
  /** First windows of objects read ahead concurrently, by file offset. */
  private prefetched = new Map<number, Promise<Uint8Array>>();
  private objStms = new Map<number, { data: Uint8Array; offsets: Map<number, number>; first: number }>();
  readonly size: number;

  private constructor(private readonly reader: RangeReader) {
    this.size = reader.size;
  }

  static async open(reader: RangeReader): Promise<PdfDocument> {
    const doc = new PdfDocument(reader);
    await doc.init();
    return doc;
  }

  get encrypted(): boolean {
    const e = this.trailer.get("Encrypt");
    return e !== undefined && e !== null;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const start = Math.max(0, Math.min(this.size, offset));
    const len = Math.max(0, Math.min(this.size - start, length));
    if (len === 0) return new Uint8Array(0);
    let bytes: Uint8Array;
    try {
      bytes = await this.reader.read(start, len);
    } catch (err) {
      throw new RangeReadError(err);
    }
    this.bytesRead += bytes.length;
    return bytes;
  }

  private async init(): Promise<void> {
    if (!Number.isSafeInteger(this.size) || this.size < 0) throw new PdfError("not a PDF: invalid file size");
    const head = await this.read(0, 1024);
    const h = indexOf(head, "%PDF-");
    if (h < 0) throw new PdfError("not a PDF: the file has no %PDF- header");
    const m = /^%PDF-(\d+\.\d+)/.exec(latin1(head, h, Math.min(head.length, h + 16)));
    this.version = m ? m[1] : null;

    const startxref = await this.findStartxref();
    await this.loadXrefChain(startxref);
  }

  private async findStartxref(): Promise<number> {
    let tailLen = Math.min(this.size, TAIL_BYTES);
    let tail = await this.read(this.size - tailLen, tailLen);
    let at = lastIndexOf(tail, "startxref");
    if (at < 0 && this.size > tailLen) {
      // Some writers leave junk after %%EOF: look a little further back.
      const more = Math.min(this.size, TAIL_BYTES_RETRY) - tailLen;
      tail = concatBytes([await this.read(this.size - tailLen - more, more), tail]);
      tailLen += more;
      at = lastIndexOf(tail, "startxref");
    }
    if (at < 0) throw new PdfError("no startxref at the end of the file: the PDF is truncated or damaged");
    const m = /^startxref\s+(\d{1,15})/.exec(latin1(tail, at, Math.min(tail.length, at + 40)));
    if (!m) throw new PdfError("garbled startxref at the end of the file: the PDF is damaged");
    const off = Number(m[1]);
    if (off >= this.size) throw new PdfError(`garbled startxref: offset ${off} is past the end of the file (${this.size} bytes)`);
    return off;
  }

  private async loadXrefChain(startxref: number): Promise<void> {
    const seen = new Set<number>();
    let off: number | null = startxref;
    for (let hop = 0; off !== null; hop++) {
      if (hop > MAX_PREV_HOPS) throw new PdfError(`broken cross-reference data: more than ${MAX_PREV_HOPS} /Prev sections`);
      if (seen.has(off)) break; // a /Prev loop
      seen.add(off);
      let trailer: PdfDict;
      try {
        trailer = await this.loadSection(off);
      } catch (err) {
        // The newest section must load; a damaged older one (via /Prev) ends the chain.
        if (hop === 0 || !(err instanceof PdfError)) throw err;
        break;
      }
      // The newest trailer's keys win; older trailers only fill gaps.
      for (const [k, v] of trailer.map) if (!this.trailer.has(k) && k !== "Prev" && k !== "XRefStm") this.trailer.map.set(k, v);
      const xrefStm = trailer.get("XRefStm");
      if (isInt(xrefStm) && xrefStm > 0 && xrefStm < this.size && !seen.has(xrefStm)) {
        seen.add(xrefStm);
        try {
          await this.loadSection(xrefStm);
        } catch (err) {
          if (!(err instanceof PdfError)) throw err;
        }
      }
      const prev = trailer.get("Prev");
      off = isInt(prev) && prev >= 0 && prev < this.size ? prev : null;
    }
    if (!this.trailer.has("Root")) throw new PdfError("broken cross-reference data: the trailer has no /Root");
  }

  /** Loads the section at `off`, appends it to `sections`, returns its trailer dictionary. */
  private async loadSection(off: number): Promise<PdfDict> {
    // One read serves both kinds of section: it holds a table's first header or a stream's dict.
    const w = await this.read(off, 4096);
    let i = 0;
    while (i < w.length && (w[i] === 32 || w[i] === 10 || w[i] === 13 || w[i] === 9 || w[i] === 12 || w[i] === 0)) i++;
    if (latin1(w, i, i + 4) === "xref") {
      const { section, trailerAt, trailerWindow } = await openClassicSection((o, l) => this.read(o, l), this.size, off + i + 4, { at: off, bytes: w });
      this.sections.push(section);
      this.sectionOffsets.push(off);
      // The bytes after `trailer` are usually already in hand from reading the table's end.
      if (trailerWindow.length > 7) this.prefetched.set(trailerAt + 7, Promise.resolve(trailerWindow.subarray(7)));
      const trailer = await this.parseAt(trailerAt + 7, 1024, (lx) => parseValue(lx));
      if (!(trailer instanceof PdfDict)) throw new PdfError("broken cross-reference table: the trailer is not a dictionary");
      return trailer;
    }
    if (i < w.length && w[i] >= 48 && w[i] <= 57) {
      let obj: { value: PdfObj; stream: PdfStream | null };
      try {
        this.prefetched.set(off + i, Promise.resolve(w.subarray(i)));
        obj = await this.readIndirectAt(off + i, null, 4096);
      } catch (err) {
        if (err instanceof PdfError) throw new PdfError(`broken cross-reference data: startxref/Prev offset ${off} does not point at an xref table or stream (${err.message})`);
        throw err;
      }
      const s = obj.stream;
      if (!s || !isName(s.dict.get("Type"), "XRef")) throw new PdfError(`broken cross-reference data: the object at offset ${off} is not a cross-reference stream`);
      // The xref stream itself is never encrypted; its params are direct objects (§7.5.8.2).
      const data = await decodeStream(s.dict, await this.rawBytes(s));
      const size = s.dict.get("Size");
      const section = StreamSection.create(data, s.dict.get("W"), s.dict.get("Index"), isInt(size) ? size : 0);
      this.sections.push(section);
      this.sectionOffsets.push(off);
      return s.dict;
    }
    throw new PdfError(`broken cross-reference data: startxref/Prev offset ${off} does not point at an xref table or stream`);
  }

  /**
   * Parses at a file offset with a growing window: `first` bytes, doubled (by appending) until
   * the parse completes or MAX_OBJECT_BYTES is reached.
   */
  private async parseAt<T>(offset: number, first: number, parse: (lx: Lexer) => T): Promise<T> {
    const pre = this.prefetched.get(offset);
    this.prefetched.delete(offset);
    let buf = (await pre?.catch(() => null)) ?? (await this.read(offset, Math.max(16, first)));
    for (;;) {
      const complete = offset + buf.length >= this.size;
      try {
        return parse(new Lexer(buf, 0, complete));
      } catch (err) {
        if (!(err instanceof NeedMoreData)) throw err;
        if (complete) throw new PdfError("unexpected end of file inside a PDF object");
        if (buf.length >= MAX_OBJECT_BYTES) throw new PdfError(`a PDF object at offset ${offset} is larger than ${MAX_OBJECT_BYTES / 1024 / 1024} MB`);
        const more = await this.read(offset + buf.length, Math.max(buf.length, 1024));
        buf = concatBytes([buf, more]);
      }
    }
  }

  /** Reads `N G obj ...` at `offset`; streams get their raw data read by /Length. */
  private async readIndirectAt(offset: number, expectNum: number | null, first: number): Promise<{ value: PdfObj; stream: PdfStream | null }> {
    let window: Uint8Array | null = null;
    const head = await this.parseAt(offset, first, (lx) => {
      const h = parseIndirectHeader(lx);
      window = lx.buf;
      return h;
    });
    if (expectNum !== null && head.num !== expectNum) {
      throw new PdfError(`broken cross-reference data: object ${expectNum} is not at offset ${offset}`);
    }
    if (head.streamStart === null) return { value: head.value, stream: null };
    const dict = head.value as PdfDict;
    const buf = window as unknown as Uint8Array;
    const streamStart = head.streamStart;
    const dataAt = offset + streamStart;
    let length: number | null = null;
    const lenObj = dict.get("Length");
    if (isInt(lenObj)) length = lenObj;
    else if (lenObj instanceof PdfRef && expectNum !== null) {
      try {
        const v = await this.fetch(lenObj);
        if (isInt(v)) length = v;
      } catch (err) {
        if (!(err instanceof PdfError)) throw err;
      }
    }
    if (length !== null && length > MAX_STREAM_BYTES) throw new PdfError(`a stream at offset ${offset} is larger than ${MAX_STREAM_BYTES / 1024 / 1024} MB`);
    // `endstream` must follow the data (after an optional EOL); 11 bytes cover "\r\nendstream".
    const fileEnd = offset + buf.length >= this.size;
    const inWindow = length !== null && (buf.length >= streamStart + length + 11 || fileEnd);
    // Data already inside the window is taken now; otherwise it is read when first needed, and
    // only the window's tail (the start of the data) is kept meanwhile.
    const have = inWindow ? buf.subarray(streamStart) : buf.slice(streamStart);
    const load = async (): Promise<Uint8Array> => {
      if (length !== null && length >= 0 && dataAt + length <= this.size) {
        const span =
          have.length >= length + 11 || fileEnd ? have : concatBytes([have, await this.read(dataAt + have.length, length + 32 - have.length)]);
        const tailAt = indexOf(span, "endstream", length, Math.min(span.length, length + 32));
        if (tailAt >= 0 && /^\s*$/.test(latin1(span, length, tailAt))) return span.slice(0, length);
      }
      return this.scanForEndstream(dataAt);
    };
    const stream = inWindow ? new PdfStream(dict, await load()) : new PdfStream(dict, null, load);
    return { value: dict, stream };
  }

  /** /Length missing or wrong: find `endstream` by reading forward in bounded chunks. */
  private async scanForEndstream(dataAt: number): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let total = 0;
    let carry = new Uint8Array(0);
    for (;;) {
      if (total > MAX_STREAM_BYTES) throw new PdfError(`a stream at offset ${dataAt} has no endstream within ${MAX_STREAM_BYTES / 1024 / 1024} MB`);
      const chunk = await this.read(dataAt + total, 64 * 1024);
      if (chunk.length === 0) throw new PdfError(`a stream at offset ${dataAt} has no endstream`);
      const joined = concatBytes([carry, chunk]);
      const at = indexOf(joined, "endstream");
      if (at >= 0) {
        parts.push(joined.subarray(0, at));
        let data = concatBytes(parts);
        // Drop the end-of-line that precedes `endstream`.
        let end = data.length;
        if (end > 0 && data[end - 1] === 10) end--;
        if (end > 0 && data[end - 1] === 13) end--;
        data = data.subarray(0, end);
        return data;
      }
      const keep = Math.min(joined.length, 8);
      parts.push(joined.subarray(0, joined.length - keep));
      carry = joined.slice(joined.length - keep);
      total += chunk.length;
    }
  }

  private async lookup(num: number): Promise<XrefEntry | undefined> {
    for (const s of this.sections) {
      const e = await s.lookup(num);
      if (e) return e;
    }
    return undefined;
  }

  /**
   * First-read size for an object at `offset`. When the xref data names the next object's offset
   * and it is near, the object fits in one read of exactly that span; a far or unknown next
   * offset (a big stream whose data may never be needed, or a sparse table) gets the default.
   */
  private firstReadSize(offset: number): number {
    let next: number | undefined;
    for (const s of this.sections) {
      const n = s.nextOffsetAfter(offset);
      if (n !== undefined && (next === undefined || n < next)) next = n;
    }
    for (const o of this.sectionOffsets) if (o > offset && next !== undefined && o < next) next = o;
    if (next === undefined) return FIRST_READ;
    const span = next - offset;
    return span >= 16 && span <= MAX_EXACT_READ ? span : FIRST_READ;
  }

  /**
   * Reads the first windows of several objects concurrently (one round trip instead of one per
   * object); the following fetches parse from them. Only bytes are read ahead, nothing is parsed,
   * so errors surface later at the fetch that needs the object.
   */
  async prefetch(refs: PdfObj[]): Promise<void> {
    const todo = refs.filter((r): r is PdfRef => r instanceof PdfRef && !this.cache.has(r.num)).slice(0, PREFETCH_MAX);
    if (todo.length < 2) return;
    const entries = await Promise.all(todo.map((r) => this.lookup(r.num).catch(() => undefined)));
    const offsets = [...new Set(entries.flatMap((e) => (e?.type === 1 && e.offset < this.size ? [e.offset] : [])))];
    const reads = offsets
      .filter((o) => !this.prefetched.has(o))
      .map((o) => {
        const p = this.read(o, this.firstReadSize(o));
        this.prefetched.set(o, p);
        return p.catch(() => null);
      });
    await Promise.all(reads);
  }

  /** Resolves a reference (null for free or unknown objects, as the spec says). */
  async fetch(ref: PdfRef): Promise<PdfObj> {
    const num = ref.num;
    if (this.cache.has(num)) return this.cache.get(num)!;
    if (this.inProgress.has(num)) throw new PdfError(`circular reference to object ${num}`);
    this.inProgress.add(num);
    try {
      const value = await this.load(num);
      const bytes = approxSize(value, 0);
      if (this.cache.size >= OBJECT_CACHE || this.cacheBytes + bytes > OBJECT_CACHE_BYTES) {
        this.cache.clear();
        this.cacheBytes = 0;
      }
      this.cache.set(num, value);
      this.cacheBytes += bytes;
      return value;
    } finally {
      this.inProgress.delete(num);
    }
  }

  private async load(num: number): Promise<PdfObj> {
    if (++this.loads > MAX_LOADS) throw new PdfError(`reading this needs more than ${MAX_LOADS} objects: the PDF is damaged or too complex`);
    const entry = await this.lookup(num);
    if (!entry || entry.type === 0) return null;
    if (entry.type === 1) {
      if (entry.offset >= this.size) throw new PdfError(`broken cross-reference data: object ${num} points past the end of the file`);
      const o = await this.readIndirectAt(entry.offset, num, this.firstReadSize(entry.offset));
      return o.stream ?? o.value;
    }
    return this.loadFromObjStm(num, entry.stream, entry.index);
  }

  private async loadFromObjStm(num: number, stmNum: number, index: number): Promise<PdfObj> {
    let stm = this.objStms.get(stmNum);
    if (!stm) {
      if (this.encrypted) throw new PdfError("the PDF is encrypted");
      const entry = await this.lookup(stmNum);
      if (!entry || entry.type !== 1) throw new PdfError(`broken cross-reference data: object stream ${stmNum} is missing`);
      const s = await this.fetch(new PdfRef(stmNum, 0));
      if (!(s instanceof PdfStream)) throw new PdfError(`broken cross-reference data: object ${stmNum} is not an object stream`);
      const n = s.dict.get("N");
      const first = s.dict.get("First");
      if (!isInt(n) || !isInt(first) || n < 0 || first < 0 || n > 1_000_000) throw new PdfError(`object stream ${stmNum} has a bad /N or /First`);
      const data = await decodeStream(s.dict, await this.rawBytes(s));
      const lx = new Lexer(data.subarray(0, Math.min(first, data.length)), 0, true);
      const offsets = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const a = lx.next();
        const b = lx.next();
        if (a.t !== "num" || b.t !== "num") break;
        if (!offsets.has(a.v)) offsets.set(a.v, b.v);
      }
      stm = { data, offsets, first };
      // Keep a few decoded object streams, within a byte budget (oldest out first).
      let held = data.length;
      for (const v of this.objStms.values()) held += v.data.length;
      for (const [k, v] of this.objStms) {
        if (this.objStms.size < OBJSTM_CACHE && held <= OBJSTM_CACHE_BYTES) break;
        this.objStms.delete(k);
        held -= v.data.length;
      }
      this.objStms.set(stmNum, stm);
    }
    const off = stm.offsets.get(num);
    if (off === undefined) throw new PdfError(`broken cross-reference data: object ${num} is not in object stream ${stmNum} (index ${index})`);
    const at = stm.first + off;
    if (at >= stm.data.length) throw new PdfError(`broken object stream ${stmNum}`);
    return parseValue(new Lexer(stm.data, at, true));
  }

  async resolve(o: PdfObj | undefined): Promise<PdfObj> {
    if (o === undefined) return null;
    for (let i = 0; o instanceof PdfRef; i++) {
      if (i > 32) throw new PdfError("a chain of references is too long");
      o = await this.fetch(o);
    }
    return o;
  }

  async resolveDict(o: PdfObj | undefined): Promise<PdfDict | null> {
    const v = await this.resolve(o);
    if (v instanceof PdfDict) return v;
    if (v instanceof PdfStream) return v.dict;
    return null;
  }

  /** Decoded bytes of a stream. Refuses in encrypted documents (the data would be ciphertext). */
  async streamBytes(s: PdfStream, maxOut = MAX_DECODED_BYTES): Promise<Uint8Array> {
    if (this.encrypted) throw new PdfError("the PDF is encrypted");
    // Filter names and parameters may be indirect.
    let dict = s.dict;
    const f = dict.get("Filter");
    const p = dict.get("DecodeParms");
    if (f instanceof PdfRef || p instanceof PdfRef || (Array.isArray(f) && f.some((x) => x instanceof PdfRef)) || (Array.isArray(p) && p.some((x) => x instanceof PdfRef))) {
      const map = new Map(dict.map);
      const deep = async (v: PdfObj | undefined): Promise<PdfObj> => {
        const r = await this.resolve(v);
        if (!Array.isArray(r)) return r;
        const out: PdfObj[] = [];
        for (const x of r) out.push(await this.resolve(x));
        return out;
      };
      map.set("Filter", await deep(f));
      map.set("DecodeParms", await deep(p));
      dict = new PdfDict(map);
    }
    return decodeStream(dict, await this.rawBytes(s), maxOut);
  }

  /** Encoded bytes of a stream, read on first use (kept on the object only when small). */
  async rawBytes(s: PdfStream): Promise<Uint8Array> {
    if (s.raw) return s.raw;
    if (!s.loader) return new Uint8Array(0);
    const raw = await s.loader();
    if (raw.length <= 256 * 1024) {
      s.raw = raw;
      this.cacheBytes += raw.length;
    }
    return raw;
  }

  async catalog(): Promise<PdfDict> {
    const root = await this.resolveDict(this.trailer.get("Root"));
    if (!root) throw new PdfError("broken PDF: the document catalog (/Root) is missing");
    return root;
  }

  async pagesRoot(): Promise<{ node: PdfDict; count: number }> {
    const cat = await this.catalog();
    const node = await this.resolveDict(cat.get("Pages"));
    if (!node) throw new PdfError("broken page tree: the catalog has no /Pages");
    const count = await this.resolve(node.get("Count"));
    if (!isInt(count) || count < 0 || count > MAX_PAGES) throw new PdfError("broken page tree: the root /Pages node has no valid /Count");
    return { node, count };
  }

  /**
   * The leaf for 0-based page `index`: descends from the root, skipping whole subtrees by their
   * /Count. When a node's /Count equals its number of kids (every kid a leaf, as in the flat trees
   * many writers produce) the kid is picked directly instead of fetching its siblings.
   */
  async findPage(index: number, root: PdfDict): Promise<PageLeaf> {
    let node = root;
    let resources = await this.resolveDict(root.get("Resources"));
    let target = index;
    const path = new Set<PdfDict>([root]);
    for (let depth = 0; ; depth++) {
      if (depth > MAX_TREE_DEPTH) throw new PdfError("broken page tree: it is too deep");
      const kids = await this.resolve(node.get("Kids"));
      if (!Array.isArray(kids)) throw new PdfError("broken page tree: a /Pages node has no /Kids");
      const count = await this.resolve(node.get("Count"));
      if (count === kids.length && target < kids.length) {
        const kid = await this.resolveDict(kids[target]);
        if (kid && isLeaf(kid)) return { dict: kid, resources: (await this.resolveDict(kid.get("Resources"))) ?? resources };
      }
      let next: PdfDict | null = null;
      for (let i = 0; i < kids.length; i++) {
        if (i % PREFETCH_MAX === 0) await this.prefetch(kids.slice(i, i + PREFETCH_MAX));
        const kid = await this.resolveDict(kids[i]);
        if (!kid) continue;
        if (isLeaf(kid)) {
          if (target === 0) return { dict: kid, resources: (await this.resolveDict(kid.get("Resources"))) ?? resources };
          target--;
          continue;
        }
        const c = await this.resolve(kid.get("Count"));
        if (!isInt(c) || c < 0) throw new PdfError("broken page tree: a /Pages node has no valid /Count");
        if (target < c) {
          next = kid;
          break;
        }
        target -= c;
      }
      if (!next) throw new PdfError(`broken page tree: page ${index + 1} is not where the /Count values say`);
      if (path.has(next)) throw new PdfError("broken page tree: it contains a cycle");
      path.add(next);
      node = next;
      resources = (await this.resolveDict(node.get("Resources"))) ?? resources;
    }
  }
}

function isLeaf(d: PdfDict): boolean {
  const t = d.get("Type");
  if (isName(t, "Page")) return true;
  if (isName(t, "Pages")) return false;
  return !d.has("Kids");
}

/** Rough memory held by a parsed object, for the cache budget. */
function approxSize(o: PdfObj, depth: number): number {
  if (o instanceof PdfStream) return 64 + (o.raw?.length ?? 0) + approxSize(o.dict, depth + 1);
  if (o instanceof PdfDict) {
    let n = 64;
    if (depth < 64) for (const v of o.map.values()) n += 32 + approxSize(v, depth + 1);
    return n;
  }
  if (Array.isArray(o)) {
    let n = 32;
    if (depth < 64) for (const v of o) n += 8 + approxSize(v, depth + 1);
    return n;
  }
  if (o instanceof PdfString) return 32 + o.bytes.length;
  return 16;
}
