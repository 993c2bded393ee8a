// Byte-level lexer for PDF syntax (ISO 32000-1 §7.2): tokens from a buffer that may be only a
// window of the file; running off an incomplete window throws NeedMoreData so the caller reads more.
import { latin1 } from "./bytes";
import { NeedMoreData, PdfError } from "./objects";

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

export type Token =
  | { t: "num"; v: number }
  | { t: "name"; v: string }
  | { t: "str"; v: Uint8Array }
  | { t: "kw"; v: string }
  | { t: "punct"; v: "[" | "]" | "<<" | ">>" | "{" | "}" }
  | { t: "eof" };

export const EOF: Token = { t: "eof" };

const NO_BYTES = new Uint8Array(0);

/**
 * A string token's bytes, in a buffer grown by doubling: a content stream may hold one string of
 * megabytes, which an array of numbers would hold at eight bytes a byte, several times over.
 */
class StringBytes {
  private buf = NO_BYTES;
  private n = 0;

  push(byte: number): void {
    if (this.n === this.buf.length) {
      const next = new Uint8Array(Math.max(32, this.buf.length * 2));
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = byte;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}

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
    const out = new StringBytes();
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
    return out.bytes();
  }

  private literalString(): Uint8Array {
    const b = this.buf;
    let i = this.pos + 1;
    let depth = 1;
    const out = new StringBytes();
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
          case 0x6e:
            out.push(10);
            break; // n
          case 0x72:
            out.push(13);
            break; // r
          case 0x74:
            out.push(9);
            break; // t
          case 0x62:
            out.push(8);
            break; // b
          case 0x66:
            out.push(12);
            break; // f
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
    return out.bytes();
  }
}
