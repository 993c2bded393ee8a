// Parses PDF objects (ISO 32000-1 §7.3) from a Lexer: values, and the `N G obj` header of an
// indirect object with the start of its stream data. Nesting depth is bounded.
import { EOF, type Lexer } from "./lexer";
import { NeedMoreData, PdfDict, PdfError, PdfKeyword, PdfName, type PdfObj, PdfRef, PdfString } from "./objects";

const MAX_DEPTH = 64;

/**
 * Array elements and dictionary entries a caller lets its parses keep, nested ones included; past
 * it they are read and dropped. A content stream's operands take one (text.ts): 16 MB of `()`
 * in one array would otherwise be eight million string objects, gigabytes.
 */
export interface ItemBudget {
  left: number;
}

/**
 * Parses one object from the lexer. Returns a `PdfKeyword` for a bare keyword (operators,
 * `endobj`, `stream`, ...), so callers decide what keywords mean in their context.
 */
export function parseObject(lx: Lexer, depth = 0, items?: ItemBudget): PdfObj | PdfKeyword {
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
          const o = parseObject(lx, depth + 1, items);
          if (o instanceof PdfKeyword) {
            if (o.word === "endobj" || o.word === "stream") throw new PdfError("unterminated array in a PDF object");
            continue; // tolerate stray keywords inside arrays
          }
          if (!items || items.left-- > 0) arr.push(o);
        }
      }
      if (tok.v === "<<") {
        const map = new Map<string, PdfObj>();
        for (;;) {
          const t = lx.next();
          if (t.t === "punct" && t.v === ">>") return new PdfDict(map);
          if (t.t === "eof") throw new PdfError("unterminated dictionary in a PDF object");
          if (t.t !== "name") {
            if (t.t === "kw" && (t.v === "endobj" || t.v === "stream"))
              throw new PdfError("unterminated dictionary in a PDF object");
            continue; // tolerate junk where a key should be
          }
          const save = lx.pos;
          const nt = lx.next();
          if (nt.t === "punct" && nt.v === ">>") {
            map.set(t.v, null);
            return new PdfDict(map);
          }
          lx.pos = save;
          const v = parseObject(lx, depth + 1, items);
          if (v instanceof PdfKeyword && (v.word === "endobj" || v.word === "stream"))
            throw new PdfError("unterminated dictionary in a PDF object");
          if (!items || items.left-- > 0) map.set(t.v, v instanceof PdfKeyword ? null : v);
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
  if (o instanceof PdfKeyword)
    throw new PdfError(`unexpected keyword "${o.word.slice(0, 20)}" where a PDF object was expected`);
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
  if (
    a.t !== "num" ||
    b.t !== "num" ||
    c.t !== "kw" ||
    c.v !== "obj" ||
    !Number.isInteger(a.v) ||
    !Number.isInteger(b.v)
  ) {
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
