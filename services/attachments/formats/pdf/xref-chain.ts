// Finds `startxref` at the file's end and follows the cross-reference chain (`/Prev`, `/XRefStm`;
// the newest section's entry wins), giving object lookup and the merged trailer.
import { lastIndexOf, latin1 } from "./bytes";
import { byteSize, decodeStream, MAX_DECODED_BYTES } from "./filters";
import type { ObjectReader } from "./object-reader";
import { isInt, isName, PdfDict, PdfError, type PdfObj, type PdfStream, PdfTooLarge } from "./objects";
import { parseValue } from "./parser";
import { openClassicSection, StreamSection, type XrefEntry, type XrefSection } from "./xref";
import { concatBytes } from "../shared/bytes";

const TAIL_BYTES = 1024;
const TAIL_BYTES_RETRY = 16 * 1024;
const MAX_PREV_HOPS = 64;
/**
 * Decoded cross-reference streams the whole chain may hold (they stay for the document's life):
 * one limit for all of them, not one per /Prev hop. The corpus bench's largest is 0.4 MB.
 */
const MAX_XREF_STREAM_BYTES = MAX_DECODED_BYTES;

/** Encoded bytes of a stream (the document's reader, so its accounting sees xref streams too). */
type RawBytes = (s: PdfStream) => Promise<Uint8Array>;

export class XrefChain {
  /** The trailers merged: the newest trailer's keys win; older trailers only fill gaps. */
  readonly trailer = new PdfDict();
  /** Newest first, as lookups search them. */
  private sections: XrefSection[] = [];
  private sectionOffsets: number[] = [];
  private streamBytes = 0;

  private constructor(
    private readonly io: ObjectReader,
    private readonly rawBytes: RawBytes,
  ) {}

  static async load(io: ObjectReader, rawBytes: RawBytes): Promise<XrefChain> {
    const chain = new XrefChain(io, rawBytes);
    await chain.loadChain(await chain.findStartxref());
    return chain;
  }

  async lookup(num: number): Promise<XrefEntry | undefined> {
    for (const s of this.sections) {
      const e = await s.lookup(num);
      if (e) return e;
    }
    return undefined;
  }

  /**
   * The nearest known offset after `offset` where another object starts, from any section's
   * entries; a section's own offset narrows it only when some object offset is known.
   */
  nextOffsetAfter(offset: number): number | undefined {
    let next: number | undefined;
    for (const s of this.sections) {
      const n = s.nextOffsetAfter(offset);
      if (n !== undefined && (next === undefined || n < next)) next = n;
    }
    for (const o of this.sectionOffsets) if (o > offset && next !== undefined && o < next) next = o;
    return next;
  }

  private async findStartxref(): Promise<number> {
    let tailLen = Math.min(this.io.size, TAIL_BYTES);
    let tail = await this.io.read(this.io.size - tailLen, tailLen);
    let at = lastIndexOf(tail, "startxref");
    if (at < 0 && this.io.size > tailLen) {
      // Some writers leave junk after %%EOF: look a little further back.
      const more = Math.min(this.io.size, TAIL_BYTES_RETRY) - tailLen;
      tail = concatBytes([await this.io.read(this.io.size - tailLen - more, more), tail]);
      tailLen += more;
      at = lastIndexOf(tail, "startxref");
    }
    if (at < 0) throw new PdfError("no startxref at the end of the file: the PDF is truncated or damaged");
    const m = /^startxref\s+(\d{1,15})/.exec(latin1(tail, at, Math.min(tail.length, at + 40)));
    if (!m) throw new PdfError("garbled startxref at the end of the file: the PDF is damaged");
    const off = Number(m[1]);
    if (off >= this.io.size)
      throw new PdfError(`garbled startxref: offset ${off} is past the end of the file (${this.io.size} bytes)`);
    return off;
  }

  private async loadChain(startxref: number): Promise<void> {
    const seen = new Set<number>();
    let off: number | null = startxref;
    for (let hop = 0; off !== null; hop++) {
      if (hop > MAX_PREV_HOPS)
        throw new PdfError(`broken cross-reference data: more than ${MAX_PREV_HOPS} /Prev sections`);
      if (seen.has(off)) break; // a /Prev loop
      seen.add(off);
      let trailer: PdfDict;
      try {
        trailer = await this.loadSection(off);
      } catch (err) {
        // The newest section must load; a damaged older one (via /Prev) ends the chain. One too
        // large to read is no damage: the file is refused, never left to pdf.js to decode.
        if (hop === 0 || !(err instanceof PdfError) || err instanceof PdfTooLarge) throw err;
        break;
      }
      // The newest trailer's keys win; older trailers only fill gaps.
      for (const [k, v] of trailer.map)
        if (!this.trailer.has(k) && k !== "Prev" && k !== "XRefStm") this.trailer.map.set(k, v);
      const xrefStm = trailer.get("XRefStm");
      if (isInt(xrefStm) && xrefStm > 0 && xrefStm < this.io.size && !seen.has(xrefStm)) {
        seen.add(xrefStm);
        try {
          await this.loadSection(xrefStm);
        } catch (err) {
          if (!(err instanceof PdfError) || err instanceof PdfTooLarge) throw err;
        }
      }
      const prev = trailer.get("Prev");
      off = isInt(prev) && prev >= 0 && prev < this.io.size ? prev : null;
    }
    if (!this.trailer.has("Root")) throw new PdfError("broken cross-reference data: the trailer has no /Root");
  }

  /** A cross-reference stream's rows, within what the chain's streams may hold together. */
  private async decodeXrefStream(s: PdfStream): Promise<Uint8Array> {
    try {
      const data = await decodeStream(s.dict, await this.rawBytes(s), MAX_XREF_STREAM_BYTES - this.streamBytes);
      this.streamBytes += data.length;
      return data;
    } catch (err) {
      if (!(err instanceof PdfTooLarge)) throw err;
      throw new PdfTooLarge(
        `the cross-reference streams decode to more than ${byteSize(MAX_XREF_STREAM_BYTES)}, the most the reader takes`,
        MAX_XREF_STREAM_BYTES,
      );
    }
  }

  /** Loads the section at `off`, appends it to `sections`, returns its trailer dictionary. */
  private async loadSection(off: number): Promise<PdfDict> {
    // One read serves both kinds of section: it holds a table's first header or a stream's dict.
    const w = await this.io.read(off, 4096);
    let i = 0;
    while (i < w.length && (w[i] === 32 || w[i] === 10 || w[i] === 13 || w[i] === 9 || w[i] === 12 || w[i] === 0)) i++;
    if (latin1(w, i, i + 4) === "xref") {
      const { section, trailerAt, trailerWindow } = await openClassicSection((o, l) => this.io.read(o, l), {
        fileSize: this.io.size,
        pos: off + i + 4,
        initial: { at: off, bytes: w },
      });
      this.sections.push(section);
      this.sectionOffsets.push(off);
      // The bytes after `trailer` are usually already in hand from reading the table's end.
      if (trailerWindow.length > 7) this.io.prime(trailerAt + 7, trailerWindow.subarray(7));
      const trailer = await this.io.parseAt(trailerAt + 7, 1024, (lx) => parseValue(lx));
      if (!(trailer instanceof PdfDict))
        throw new PdfError("broken cross-reference table: the trailer is not a dictionary");
      return trailer;
    }
    if (i < w.length && w[i] >= 48 && w[i] <= 57) {
      let obj: { value: PdfObj; stream: PdfStream | null };
      try {
        this.io.prime(off + i, w.subarray(i));
        obj = await this.io.readIndirectAt(off + i, { expectNum: null, first: 4096, fetch: null });
      } catch (err) {
        if (err instanceof PdfError)
          throw new PdfError(
            `broken cross-reference data: startxref/Prev offset ${off} does not point at an xref table or stream (${err.message})`,
          );
        throw err;
      }
      const s = obj.stream;
      if (!s || !isName(s.dict.get("Type"), "XRef"))
        throw new PdfError(`broken cross-reference data: the object at offset ${off} is not a cross-reference stream`);
      // The xref stream itself is never encrypted; its params are direct objects (§7.5.8.2).
      const data = await this.decodeXrefStream(s);
      const size = s.dict.get("Size");
      const section = StreamSection.create(data, {
        wRaw: s.dict.get("W"),
        indexRaw: s.dict.get("Index"),
        size: isInt(size) ? size : 0,
      });
      this.sections.push(section);
      this.sectionOffsets.push(off);
      return s.dict;
    }
    throw new PdfError(
      `broken cross-reference data: startxref/Prev offset ${off} does not point at an xref table or stream`,
    );
  }
}
