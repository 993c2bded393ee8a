/**
 * PDF object model and a byte-level lexer/parser for it (ISO 32000-1 §7.2-7.3).
 *
 * The parser works on a buffer that may be only a window of the file: with `complete = false`
 * running off the end throws `NeedMoreData`, and the caller reads further and parses again.
 * All failures on malformed input are `PdfError`s; nesting depth is bounded.
 */

/** Every failure of the PDF reader: not a PDF, damaged structure, unsupported feature. */
export class PdfError extends Error {
  override readonly name = "PdfError";
}

/** Internal: the buffer ended inside a token or object; read more bytes and parse again. */
export class NeedMoreData extends Error {
  override readonly name = "NeedMoreData";
}

export class PdfName {
  constructor(readonly name: string) {}
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}

export class PdfString {
  constructor(readonly bytes: Uint8Array) {}
}

export class PdfDict {
  constructor(readonly map: Map<string, PdfObj> = new Map()) {}
  get(key: string): PdfObj | undefined {
    return this.map.get(key);
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
}

export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    /** Still-encoded stream bytes, when already read. */
    public raw: Uint8Array | null,
    /** Reads the encoded bytes on demand (so a stream's dictionary can be looked at cheaply). */
    readonly loader: (() => Promise<Uint8Array>) | null = null,
  ) {}
}

/** A bare keyword; only content-stream operators and structural words surface as these. */
export class PdfKeyword {
  constructor(readonly word: string) {}
}

export type PdfObj = null | boolean | number | PdfName | PdfString | PdfRef | PdfDict | PdfStream | PdfObj[];

export function isName(o: PdfObj | undefined, name?: string): o is PdfName {
  return o instanceof PdfName && (name === undefined || o.name === name);
}

export function isInt(o: unknown): o is number {
  return typeof o === "number" && Number.isInteger(o);
}

const MAX_DEPTH = 64;

// Character classes (§7.2.2).
const WS = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) WS[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of "()<>[]{}/%") DELIM[c.charCodeAt(0)] = 1;

export function isWhite(c: number): boolean {
  return WS[c] === 1;
}

/** A regular character: neither white space nor a delimiter. */
export function isRegular(c: number): boolean {
  return WS[c] === 0 && DELIM[c] === 0;
}

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

export function latin1(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let s = "";
  for (let i = start; i < end; i += 0x2000) s += String.fromCharCode(...bytes.subarray(i, Math.min(end, i + 0x2000)));
  return s;
}

export type Token =
  | { t: "num"; v: number }
  | { t: "name"; v: string }
  | { t: "str"; v: Uint8Array }
  | { t: "kw"; v: string }
  | { t: "punct"; v: "[" | "]" | "<<" | ">>" | "{" | "}" }
  | { t: "eof" };

const EOF: Token = { t: "eof" };

export class Lexer {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    pos = 0,
    /** True when `buf` runs to the real end of the data (file or decoded stream). */
    readonly complete = true,
  ) {
    this.pos = pos;
  }

  private more(): never {
    if (this.complete) throw new PdfError("unexpected end of data inside a PDF object");
    throw new NeedMoreData();
  }

  /** Skips white space and comments. */
  skipWs(): void {
    const b = this.buf;
    for (;;) {
      while (this.pos < b.length && WS[b[this.pos]] === 1) this.pos++;
      if (this.pos < b.length && b[this.pos] === 37 /* % */) {
        while (this.pos < b.length && b[this.pos] !== 10 && b[this.pos] !== 13) this.pos++;
        continue;
      }
      return;
    }
  }

  /** True when nothing but white space remains (only meaningful for complete buffers). */
  atEnd(): boolean {
    this.skipWs();
    return this.pos >= this.buf.length;
  }

  next(): Token {
    this.skipWs();
    const b = this.buf;
    if (this.pos >= b.length) {
      if (!this.complete) this.more();
      return EOF;
    }
    const c = b[this.pos];
    switch (c) {
      case 0x5b: // [
        this.pos++;
        return { t: "punct", v: "[" };
      case 0x5d:
        this.pos++;
        return { t: "punct", v: "]" };
      case 0x7b:
        this.pos++;
        return { t: "punct", v: "{" };
      case 0x7d:
        this.pos++;
        return { t: "punct", v: "}" };
      case 0x28: // (
        return { t: "str", v: this.literalString() };
      case 0x3c: // <
        if (this.pos + 1 >= b.length) this.more();
        if (b[this.pos + 1] === 0x3c) {
          this.pos += 2;
          return { t: "punct", v: "<<" };
        }
        return { t: "str", v: this.hexString() };
      case 0x3e: // >
        if (this.pos + 1 >= b.length) this.more();
        if (b[this.pos + 1] === 0x3e) {
          this.pos += 2;
          return { t: "punct", v: ">>" };
        }
        this.pos++;
        return { t: "kw", v: ">" };
      case 0x2f: // /
        return { t: "name", v: this.name() };
      case 0x29: // stray )
        this.pos++;
        return { t: "kw", v: ")" };
    }
    // Regular run: number or keyword.
    const start = this.pos;
    let end = start;
    while (end < b.length && WS[b[end]] === 0 && DELIM[b[end]] === 0) end++;
    if (end >= b.length && !this.complete) this.more();
    this.pos = end;
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46) {
      let numeric = true;
      for (let i = start; i < end; i++) {
        const d = b[i];
        if (!((d >= 48 && d <= 57) || d === 43 || d === 45 || d === 46)) {
          numeric = false;
          break;
        }
      }
      if (numeric) {
        const v = Number.parseFloat(latin1(b, start, end).replace(/^([+-])[+-]+/, "$1"));
        return { t: "num", v: Number.isFinite(v) ? v : 0 };
      }
    }
    return { t: "kw", v: latin1(b, start, end) };
  }

  private name(): string {
    const b = this.buf;
    let i = this.pos + 1;
    let s = "";
    while (i < b.length && WS[b[i]] === 0 && DELIM[b[i]] === 0) {
      if (b[i] === 35 /* # */ && i + 2 < b.length && hexVal(b[i + 1]) >= 0 && hexVal(b[i + 2]) >= 0) {
        s += String.fromCharCode(hexVal(b[i + 1]) * 16 + hexVal(b[i + 2]));
        i += 3;
      } else {
        s += String.fromCharCode(b[i]);
        i++;
      }
    }
    if (i >= b.length && !this.complete) this.more();
    this.pos = i;
    return s;
  }

  private hexString(): Uint8Array {
    const b = this.buf;
    let i = this.pos + 1;
    const out: number[] = [];
    let hi = -1;
    for (;;) {
      if (i >= b.length) {
        if (!this.complete) this.more();
        break; // unterminated at the end of a complete buffer: keep what we have
      }
      const c = b[i++];
      if (c === 0x3e) break;
      const v = hexVal(c);
      if (v < 0) continue; // white space (and, leniently, junk)
      if (hi < 0) hi = v;
      else {
        out.push(hi * 16 + v);
        hi = -1;
      }
    }
    if (hi >= 0) out.push(hi * 16);
    this.pos = i;
    return Uint8Array.from(out);
  }

  private literalString(): Uint8Array {
    const b = this.buf;
    let i = this.pos + 1;
    let depth = 1;
    const out: number[] = [];
    const need = () => {
      if (i >= b.length) {
        if (!this.complete) this.more();
        return false;
      }
      return true;
    };
    while (need()) {
      const c = b[i++];
      if (c === 0x28) {
        depth++;
        out.push(c);
      } else if (c === 0x29) {
        if (--depth === 0) break;
        out.push(c);
      } else if (c === 0x5c /* \ */) {
        if (!need()) break;
        const e = b[i++];
        switch (e) {
          case 0x6e: out.push(10); break; // n
          case 0x72: out.push(13); break; // r
          case 0x74: out.push(9); break; // t
          case 0x62: out.push(8); break; // b
          case 0x66: out.push(12); break; // f
          case 0x0d: // line continuation: \ CR [LF]
            if (i < b.length && b[i] === 0x0a) i++;
            break;
          case 0x0a:
            break;
          default:
            if (e >= 0x30 && e <= 0x37) {
              let v = e - 0x30;
              for (let k = 0; k < 2 && i < b.length && b[i] >= 0x30 && b[i] <= 0x37; k++) v = v * 8 + (b[i++] - 0x30);
              out.push(v & 0xff);
            } else out.push(e); // \( \) \\ and unknown escapes: the character itself
        }
      } else if (c === 0x0d) {
        // An unescaped end-of-line is read as a single LF.
        if (i < b.length && b[i] === 0x0a) i++;
        out.push(10);
      } else out.push(c);
    }
    this.pos = i;
    return Uint8Array.from(out);
  }
}

/**
 * Parses one object from the lexer. Returns a `PdfKeyword` for a bare keyword (operators,
 * `endobj`, `stream`, ...), so callers decide what keywords mean in their context.
 */
export function parseObject(lx: Lexer, depth = 0): PdfObj | PdfKeyword {
  if (depth > MAX_DEPTH) throw new PdfError("PDF object nesting is too deep");
  const tok = lx.next();
  switch (tok.t) {
    case "num": {
      // `num gen R` is a reference: look ahead two tokens, restore if it is not.
      if (Number.isInteger(tok.v) && tok.v >= 0) {
        const save = lx.pos;
        const t2 = lx.next();
        if (t2.t === "num" && Number.isInteger(t2.v) && t2.v >= 0) {
          const t3 = lx.next();
          if (t3.t === "kw" && t3.v === "R") return new PdfRef(tok.v, t2.v);
        }
        lx.pos = save;
      }
      return tok.v;
    }
    case "name":
      return new PdfName(tok.v);
    case "str":
      return new PdfString(tok.v);
    case "punct":
      if (tok.v === "[") {
        const arr: PdfObj[] = [];
        for (;;) {
          const save = lx.pos;
          const t = lx.next();
          if (t.t === "punct" && t.v === "]") return arr;
          if (t.t === "eof") throw new PdfError("unterminated array in a PDF object");
          lx.pos = save;
          const o = parseObject(lx, depth + 1);
          if (o instanceof PdfKeyword) {
            if (o.word === "endobj" || o.word === "stream") throw new PdfError("unterminated array in a PDF object");
            continue; // tolerate stray keywords inside arrays
          }
          arr.push(o);
        }
      }
      if (tok.v === "<<") {
        const map = new Map<string, PdfObj>();
        for (;;) {
          const t = lx.next();
          if (t.t === "punct" && t.v === ">>") return new PdfDict(map);
          if (t.t === "eof") throw new PdfError("unterminated dictionary in a PDF object");
          if (t.t !== "name") {
            if (t.t === "kw" && (t.v === "endobj" || t.v === "stream")) throw new PdfError("unterminated dictionary in a PDF object");
            continue; // tolerate junk where a key should be
          }
          const save = lx.pos;
          const nt = lx.next();
          if (nt.t === "punct" && nt.v === ">>") {
            map.set(t.v, null);
            return new PdfDict(map);
          }
          lx.pos = save;
          const v = parseObject(lx, depth + 1);
          if (v instanceof PdfKeyword) {
            if (v.word === "endobj" || v.word === "stream") throw new PdfError("unterminated dictionary in a PDF object");
            map.set(t.v, null);
          } else map.set(t.v, v);
        }
      }
      if (tok.v === "{") {
        // PostScript calculator function bodies: skip to the matching brace.
        let d = 1;
        while (d > 0) {
          const t = lx.next();
          if (t.t === "eof") throw new PdfError("unterminated { in a PDF object");
          if (t.t === "punct" && t.v === "{") d++;
          if (t.t === "punct" && t.v === "}") d--;
        }
        return null;
      }
      return new PdfKeyword(tok.v);
    case "kw":
      if (tok.v === "true") return true;
      if (tok.v === "false") return false;
      if (tok.v === "null") return null;
      return new PdfKeyword(tok.v);
    case "eof":
      throw new PdfError("unexpected end of data inside a PDF object");
  }
}

/** Parses a value that must not be a bare keyword. */
export function parseValue(lx: Lexer): PdfObj {
  const o = parseObject(lx);
  if (o instanceof PdfKeyword) throw new PdfError(`unexpected keyword "${o.word.slice(0, 20)}" where a PDF object was expected`);
  return o;
}

export interface IndirectHeader {
  num: number;
  gen: number;
  value: PdfObj;
  /** Offset (within the buffer) of the first stream data byte, when the object is a stream. */
  streamStart: number | null;
}

/** Parses `num gen obj <value> [stream EOL]` at the lexer's position. */
export function parseIndirectHeader(lx: Lexer): IndirectHeader {
  const a = lx.next();
  const b = lx.next();
  const c = lx.next();
  if (a.t !== "num" || b.t !== "num" || c.t !== "kw" || c.v !== "obj" || !Number.isInteger(a.v) || !Number.isInteger(b.v)) {
    throw new PdfError("expected an object header (N G obj)");
  }
  const value = parseValue(lx);
  let streamStart: number | null = null;
  if (value instanceof PdfDict) {
    const save = lx.pos;
    const t = lx.complete && lx.atEnd() ? EOF : lx.next();
    if (t.t === "kw" && t.v === "stream") {
      const buf = lx.buf;
      let p = lx.pos;
      // "stream" is followed by CRLF or LF (leniently a lone CR).
      if (p + 1 >= buf.length && !lx.complete) throw new NeedMoreData();
      if (buf[p] === 13) p += buf[p + 1] === 10 ? 2 : 1;
      else if (buf[p] === 10) p += 1;
      streamStart = p;
    } else lx.pos = save;
  }
  return { num: a.v, gen: b.v, value, streamStart };
}

export function indexOf(hay: Uint8Array, needle: string, from = 0, to = hay.length): number {
  const n0 = needle.charCodeAt(0);
  const last = to - needle.length;
  outer: for (let i = Math.max(0, from); i <= last; i++) {
    if (hay[i] !== n0) continue;
    for (let k = 1; k < needle.length; k++) if (hay[i + k] !== needle.charCodeAt(k)) continue outer;
    return i;
  }
  return -1;
}

export function lastIndexOf(hay: Uint8Array, needle: string): number {
  const n0 = needle.charCodeAt(0);
  outer: for (let i = hay.length - needle.length; i >= 0; i--) {
    if (hay[i] !== n0) continue;
    for (let k = 1; k < needle.length; k++) if (hay[i + k] !== needle.charCodeAt(k)) continue outer;
    return i;
  }
  return -1;
}

export { concatBytes } from "../shared/bytes";
