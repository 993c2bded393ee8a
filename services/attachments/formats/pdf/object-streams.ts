// Objects stored inside compressed object streams (ISO 32000-1 §7.5.7): each stream is decoded
// once and its offset table kept, a few streams at a time within a byte budget that counts the
// stream being decoded too.
import { byteSize, decodeStream, MAX_DECODED_BYTES } from "./filters";
import { Lexer } from "./lexer";
import { isInt, PdfError, type PdfObj, type PdfObjectFetcher, PdfRef, PdfStream, PdfTooLarge } from "./objects";
import { parseValue } from "./parser";
import type { XrefChain } from "./xref-chain";

const OBJSTM_CACHE = 8;
/** Most one object stream decodes to (the largest on the corpus bench is 12.4 MB). */
const MAX_OBJSTM_BYTES = MAX_DECODED_BYTES;
/**
 * Decoded object streams held at once, the one being decoded included: before a decode, older
 * streams go until a full-size new one fits beside them. Small streams (nearly all are under
 * 64 KB) stay cached; a large one is let go before the next is decoded, not after.
 */
const OBJSTM_CACHE_BYTES = 24 * 1024 * 1024;

interface DecodedObjStm {
  data: Uint8Array;
  /** Object number to offset, relative to `first`. */
  offsets: Map<number, number>;
  first: number;
}

export class ObjectStreams {
  private decoded = new Map<number, DecodedObjStm>();

  constructor(
    private readonly doc: PdfObjectFetcher,
    private readonly xref: XrefChain,
  ) {}

  /** Object `num`, entry `index` of object stream `stmNum` (as the xref entry says). */
  async load(num: number, stmNum: number, index: number): Promise<PdfObj> {
    const stm = this.decoded.get(stmNum) ?? (await this.decode(stmNum));
    const off = stm.offsets.get(num);
    if (off === undefined)
      throw new PdfError(
        `broken cross-reference data: object ${num} is not in object stream ${stmNum} (index ${index})`,
      );
    const at = stm.first + off;
    if (at >= stm.data.length) throw new PdfError(`broken object stream ${stmNum}`);
    return parseValue(new Lexer(stm.data, at, true));
  }

  private async decode(stmNum: number): Promise<DecodedObjStm> {
    if (this.doc.encrypted) throw new PdfError("the PDF is encrypted");
    const entry = await this.xref.lookup(stmNum);
    if (entry?.type !== 1) throw new PdfError(`broken cross-reference data: object stream ${stmNum} is missing`);
    const s = await this.doc.fetch(new PdfRef(stmNum, 0));
    if (!(s instanceof PdfStream))
      throw new PdfError(`broken cross-reference data: object ${stmNum} is not an object stream`);
    const n = s.dict.get("N");
    const first = s.dict.get("First");
    if (!isInt(n) || !isInt(first) || n < 0 || first < 0 || n > 1_000_000)
      throw new PdfError(`object stream ${stmNum} has a bad /N or /First`);
    this.makeRoom();
    let data: Uint8Array;
    try {
      data = await decodeStream(s.dict, await this.doc.rawBytes(s), MAX_OBJSTM_BYTES);
    } catch (err) {
      if (!(err instanceof PdfTooLarge)) throw err;
      throw new PdfTooLarge(
        `object stream ${stmNum} decodes to more than ${byteSize(MAX_OBJSTM_BYTES)}, the most the reader takes`,
        MAX_OBJSTM_BYTES,
      );
    }
    const lx = new Lexer(data.subarray(0, Math.min(first, data.length)), 0, true);
    const offsets = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const a = lx.next();
      const b = lx.next();
      if (a.t !== "num" || b.t !== "num") break;
      if (!offsets.has(a.v)) offsets.set(a.v, b.v);
    }
    const stm = { data, offsets, first };
    this.decoded.set(stmNum, stm);
    return stm;
  }

  /**
   * Lets the oldest decoded streams go until one more, of the largest size a decode may reach,
   * fits the budget beside those kept (and the count allows one more). A decoded stream's buffer
   * may be larger than its data: the buffer is what is held.
   */
  private makeRoom(): void {
    let held = 0;
    for (const v of this.decoded.values()) held += v.data.buffer.byteLength;
    for (const [k, v] of this.decoded) {
      if (this.decoded.size < OBJSTM_CACHE && held + MAX_OBJSTM_BYTES <= OBJSTM_CACHE_BYTES) break;
      this.decoded.delete(k);
      held -= v.data.buffer.byteLength;
    }
  }
}
