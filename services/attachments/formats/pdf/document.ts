/**
 * A PDF opened through ranged reads: the tail (`startxref`), the cross-reference chain
 * (xref-chain.ts), then objects on demand, each read with a bounded window at its offset
 * (object-reader.ts; sized from the next known object offset when the xref tells us one) and
 * grown only when the object is larger. Objects in compressed object streams are supported
 * (object-streams.ts); the page tree is page-tree.ts.
 */
import { indexOf, latin1 } from "./bytes";
import { decodeStream, MAX_DECODED_BYTES } from "./filters";
import { ObjectReader } from "./object-reader";
import { ObjectStreams } from "./object-streams";
import {
  PdfDict,
  PdfError,
  type PdfObj,
  type PdfObjectFetcher,
  PdfRef,
  type PdfResolver,
  PdfStream,
  PdfString,
} from "./objects";
import { catalog, findPage, type PageLeaf, pagesRoot } from "./page-tree";
import { XrefChain } from "./xref-chain";
import type { RangeReader } from "../shared/range-reader";

const FIRST_READ = 4096;
const MAX_EXACT_READ = 64 * 1024;
const OBJECT_CACHE = 20_000;
const OBJECT_CACHE_BYTES = 24 * 1024 * 1024;
/** Object loads one call may make: bounds the work a hostile page tree or reference web can cause. */
const MAX_LOADS = 200_000;
const PREFETCH_MAX = 16;

export class PdfDocument implements PdfResolver, PdfObjectFetcher {
  version: string | null = null;
  /** Most objects one prefetch reads ahead; the page tree walks its kids in batches of this. */
  readonly prefetchMax = PREFETCH_MAX;
  private readonly io: ObjectReader;
  private xref!: XrefChain;
  private objStms!: ObjectStreams;
  private cache = new Map<number, PdfObj>();
  private cacheBytes = 0;
  private loads = 0;
  private inProgress = new Set<number>();
  readonly size: number;

  private constructor(reader: RangeReader) {
    this.io = new ObjectReader(reader);
    this.size = reader.size;
  }

  static async open(reader: RangeReader): Promise<PdfDocument> {
    const doc = new PdfDocument(reader);
    await doc.init();
    return doc;
  }

  get bytesRead(): number {
    return this.io.bytesRead;
  }

  /** The merged trailer of the cross-reference chain. */
  get trailer(): PdfDict {
    return this.xref.trailer;
  }

  get encrypted(): boolean {
    const e = this.trailer.get("Encrypt");
    return e !== undefined && e !== null;
  }

  read(offset: number, length: number): Promise<Uint8Array> {
    return this.io.read(offset, length);
  }

  private async init(): Promise<void> {
    if (!Number.isSafeInteger(this.size) || this.size < 0) throw new PdfError("not a PDF: invalid file size");
    const head = await this.read(0, 1024);
    // pdf.js accepts the header anywhere in the first 1024 bytes, or none at all; so does this
    // reader, as long as the file ends like a PDF.
    const h = indexOf(head, "%PDF-");
    const m = h < 0 ? null : /^%PDF-(\d+\.\d+)/.exec(latin1(head, h, Math.min(head.length, h + 16)));
    this.version = m ? m[1] : null;

    try {
      this.xref = await XrefChain.load(this.io, (s) => this.rawBytes(s));
    } catch (err) {
      // Without a header at the start and without "startxref" near the end nothing says PDF: "not a
      // PDF" also keeps pdf.js from scanning the whole file for objects.
      if (h !== 0 && err instanceof PdfError && err.message.startsWith("no startxref")) {
        throw new PdfError(
          `not a PDF: ${h < 0 ? "the file has no %PDF- header" : "the %PDF- header is not at the start"} and no startxref at its end`,
          { cause: err },
        );
      }
      throw err;
    }
    this.objStms = new ObjectStreams(this, this.xref);
  }

  /**
   * First-read size for an object at `offset`. When the xref data names the next object's offset
   * and it is near, the object fits in one read of exactly that span; a far or unknown next
   * offset (a big stream whose data may never be needed, or a sparse table) gets the default.
   */
  private firstReadSize(offset: number): number {
    const next = this.xref.nextOffsetAfter(offset);
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
    const entries = await Promise.all(todo.map((r) => this.xref.lookup(r.num).catch(() => undefined)));
    const offsets = [...new Set(entries.flatMap((e) => (e?.type === 1 && e.offset < this.size ? [e.offset] : [])))];
    await Promise.all(offsets.map((o) => this.io.readAhead(o, this.firstReadSize(o))));
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
    if (++this.loads > MAX_LOADS)
      throw new PdfError(`reading this needs more than ${MAX_LOADS} objects: the PDF is damaged or too complex`);
    const entry = await this.xref.lookup(num);
    if (!entry || entry.type === 0) return null;
    if (entry.type === 1) {
      if (entry.offset >= this.size)
        throw new PdfError(`broken cross-reference data: object ${num} points past the end of the file`);
      const o = await this.io.readIndirectAt(entry.offset, {
        expectNum: num,
        first: this.firstReadSize(entry.offset),
        fetch: (ref) => this.fetch(ref),
      });
      return o.stream ?? o.value;
    }
    return this.objStms.load(num, entry.stream, entry.index);
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
    if (
      f instanceof PdfRef ||
      p instanceof PdfRef ||
      (Array.isArray(f) && f.some((x) => x instanceof PdfRef)) ||
      (Array.isArray(p) && p.some((x) => x instanceof PdfRef))
    ) {
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

  catalog(): Promise<PdfDict> {
    return catalog(this);
  }

  pagesRoot(): Promise<{ node: PdfDict; count: number }> {
    return pagesRoot(this);
  }

  /** The leaf of 0-based page `index` under `root` (the node pagesRoot gave). */
  findPage(index: number, root: PdfDict): Promise<PageLeaf> {
    return findPage(this, index, root);
  }
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
