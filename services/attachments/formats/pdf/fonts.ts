/**
 * From shown string bytes to text (ISO 32000-1 §9.10): a font's /ToUnicode CMap (bfchar and
 * bfrange) when it has one; otherwise, for simple fonts, the /Encoding (WinAnsi, MacRoman,
 * Standard, plus /Differences glyph names); for Type0 fonts, UCS-2/UTF-16 predefined CMaps.
 * Code lengths of Type0 fonts come from the codespace ranges (Identity-H/V: two bytes).
 *
 * Each glyph comes with its advance, which layout places it by: /Widths for simple fonts (Type 3
 * in glyph space through /FontMatrix, with an em estimated from them); /W for Type0 fonts, or /W2
 * in vertical writing, by CID: the code itself under Identity-H/V, an embedded encoding CMap's
 * cidchar/cidrange, else (a predefined CMap) the default width.
 */
import type { PdfDocument } from "./document";
import { glyphText, namedEncoding, STANDARD, standardWidths, type Encoding } from "./encodings";
import { byteSize } from "./filters";
import { Lexer, type Token } from "./lexer";
import { isInt, PdfDict, PdfError, PdfName, type PdfObj, PdfStream, PdfTooLarge } from "./objects";

/**
 * Receives a shown string's glyphs in order: the text of one glyph ("" when the font gives none),
 * its width in text space units per unit of font size (1/1000 em units / 1000), and whether word
 * spacing (Tw) applies to it (a single-byte code 32).
 */
export type GlyphSink = (text: string, width: number, wordSpace: boolean) => void;

/** What decoding a shown string found, beyond its glyphs. */
export interface DecodeCounts {
  glyphs: number;
  /** Glyphs the font gives no text for (no /ToUnicode entry, no usable encoding or glyph name). */
  unmapped: number;
  /**
   * Glyphs given text by a guess: the font program's own encoding or cmap decides their meaning,
   * and the own reader does not read font programs (pdf.js does).
   */
  guessed: number;
}

export interface FontDecoder {
  /**
   * Decodes `bytes` glyph by glyph into `glyph`, so layout can place each one. In vertical
   * writing the width passed is the vertical displacement (w1y, negative: glyphs go down).
   */
  decode(bytes: Uint8Array, glyph: GlyphSink): DecodeCounts;
  /** Writing mode 1 (§9.7.4.3): a `-V` CMap or /WMode 1. */
  vertical?: boolean;
  /** Height of the font's em in text space units per unit of font size: 1 except for Type 3 fonts. */
  em?: number;
  /** Widths are a guess (the codes' CIDs are unknown): positions inside a string are approximate. */
  approximate?: boolean;
}

interface Codespace {
  lo: number[];
  hi: number[];
}

export interface ToUnicodeMap {
  codespace: Codespace[];
  chars: Map<number, string>;
  /** Sorted by `lo`; `dst` is either a base string incremented per code or one string per code. */
  ranges: { lo: number; hi: number; dst: string | string[] }[];
  /** An encoding CMap's code-to-CID mappings (cidchar, cidrange), sorted by `lo`. */
  cids: { lo: number; hi: number; cid: number }[];
  /** /WMode 1: vertical writing. */
  vertical: boolean;
}

const MAX_CMAP_ENTRIES = 200_000;

function utf16be(bytes: Uint8Array): string {
  // One-byte targets (`<41>`) are written by some producers; they mean the byte's character.
  if (bytes.length === 1) return String.fromCharCode(bytes[0]);
  let s = "";
  for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode((bytes[i] << 8) | bytes[i + 1]);
  return s;
}

function codeOf(bytes: Uint8Array): number {
  let v = 0;
  for (let i = 0; i < bytes.length && i < 4; i++) v = v * 256 + bytes[i];
  return v;
}

/** Parses the parts of a CMap that text extraction needs. */
export function parseCMap(data: Uint8Array): ToUnicodeMap {
  const lx = new Lexer(data, 0, true);
  const map: ToUnicodeMap = { codespace: [], chars: new Map(), ranges: [], cids: [], vertical: false };
  let entries = 0;
  const count = () => {
    if (++entries > MAX_CMAP_ENTRIES) throw new PdfError("a CMap is too large");
  };
  const dstText = (t: Token): string | null => (t.t === "str" ? utf16be(t.v) : t.t === "name" ? glyphText(t.v) : null);
  for (;;) {
    const tok = lx.next();
    if (tok.t === "eof") break;
    if (tok.t === "name" && tok.v === "WMode") {
      const v = lx.next();
      map.vertical = v.t === "num" && v.v === 1;
      continue;
    }
    if (tok.t !== "kw") continue;
    if (tok.v === "begincidchar" || tok.v === "begincidrange") {
      const range = tok.v === "begincidrange";
      for (;;) {
        const a = lx.next();
        if (a.t !== "str") break;
        const b = range ? lx.next() : a;
        if (b.t !== "str") break;
        const cid = lx.next();
        if (cid.t !== "num") break;
        count();
        map.cids.push({ lo: codeOf(a.v), hi: codeOf(b.v), cid: cid.v });
      }
    } else if (tok.v === "begincodespacerange") {
      for (;;) {
        const a = lx.next();
        if (a.t !== "str") break;
        const b = lx.next();
        if (b.t !== "str" || b.v.length !== a.v.length || a.v.length === 0 || a.v.length > 4) break;
        count();
        map.codespace.push({ lo: [...a.v], hi: [...b.v] });
      }
    } else if (tok.v === "beginbfchar") {
      for (;;) {
        const a = lx.next();
        if (a.t !== "str") break;
        const text = dstText(lx.next());
        if (text === null) break;
        count();
        map.chars.set(codeOf(a.v), text);
      }
    } else if (tok.v === "beginbfrange") {
      for (;;) {
        const a = lx.next();
        if (a.t !== "str") break;
        const b = lx.next();
        if (b.t !== "str") break;
        const lo = codeOf(a.v);
        const hi = codeOf(b.v);
        const d = lx.next();
        count();
        if (d.t === "str") {
          if (hi >= lo) map.ranges.push({ lo, hi, dst: utf16be(d.v) });
        } else if (d.t === "punct" && d.v === "[") {
          const list: string[] = [];
          for (;;) {
            const e = lx.next();
            if (e.t === "eof" || (e.t === "punct" && e.v === "]")) break;
            count();
            list.push(dstText(e) ?? "");
          }
          if (hi >= lo) map.ranges.push({ lo, hi: Math.min(hi, lo + list.length - 1), dst: list });
        } else break;
      }
    }
  }
  map.ranges.sort((x, y) => x.lo - y.lo);
  map.cids.sort((x, y) => x.lo - y.lo);
  return map;
}

function lookupToUnicode(map: ToUnicodeMap, code: number): string | undefined {
  const c = map.chars.get(code);
  if (c !== undefined) return c;
  const r = map.ranges;
  let lo = 0;
  let hi = r.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (r[mid].lo <= code) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  // Ranges may overlap; look back a little for one that covers the code.
  for (let i = found; i >= 0 && i > found - 8; i--) {
    const range = r[i];
    if (code > range.hi) continue;
    if (Array.isArray(range.dst)) return range.dst[code - range.lo];
    const base = range.dst;
    if (base.length === 0) return "";
    return base.slice(0, -1) + String.fromCharCode(base.charCodeAt(base.length - 1) + (code - range.lo));
  }
  return undefined;
}

function matchCodespace(spaces: Codespace[], bytes: Uint8Array, at: number): number {
  for (let n = 1; n <= 4; n++) {
    for (const cs of spaces) {
      if (cs.lo.length !== n || at + n > bytes.length) continue;
      let ok = true;
      for (let k = 0; k < n && ok; k++) ok = bytes[at + k] >= cs.lo[k] && bytes[at + k] <= cs.hi[k];
      if (ok) return n;
    }
  }
  return 0;
}

/** Most a /ToUnicode CMap decodes to: real ones are a few hundred KB at most. */
const MAX_CMAP_BYTES = 8 * 1024 * 1024;

async function loadCMapStream(doc: PdfDocument, o: unknown): Promise<ToUnicodeMap | null> {
  const s = await doc.resolve(o as never);
  if (!(s instanceof PdfStream)) return null;
  try {
    return parseCMap(await doc.streamBytes(s, MAX_CMAP_BYTES));
  } catch (err) {
    // Too large is no damage: without its CMap the font's glyphs would be unmapped, and an
    // unmapped glyph sends the page to pdf.js, which would decode this CMap with no limit.
    if (err instanceof PdfTooLarge && err.limit === MAX_CMAP_BYTES)
      throw new PdfTooLarge(
        `a font's /ToUnicode CMap decodes to more than ${byteSize(MAX_CMAP_BYTES)}, the most the reader takes`,
        MAX_CMAP_BYTES,
      );
    if (!(err instanceof PdfError) || err instanceof PdfTooLarge || err.message === "the PDF is encrypted") throw err;
    return null; // a damaged CMap costs this font its text, not the page
  }
}

export async function loadFont(doc: PdfDocument, font: PdfDict): Promise<FontDecoder> {
  const subtype = await doc.resolve(font.get("Subtype"));
  const toUnicode = await loadCMapStream(doc, font.get("ToUnicode"));
  if (subtype instanceof PdfName && subtype.name === "Type0") return type0Decoder(doc, font, toUnicode);
  return simpleDecoder(doc, { font, toUnicode, type3: subtype instanceof PdfName && subtype.name === "Type3" });
}

/** Standard-14 text fonts, whose built-in encoding is StandardEncoding (Symbol and ZapfDingbats are not). */
const STANDARD_TEXT_FONT = /^(Times|Helvetica|Courier|Arial|TimesNewRoman)/;

/**
 * Whether a simple font without /ToUnicode maps its codes through something only its font program
 * (or the viewer's font matching) knows: no /Encoding or no /BaseEncoding over an embedded program
 * (its built-in encoding; TeX fonts put ligatures and Greek there), a symbolic TrueType font (its
 * own cmap), Symbol/ZapfDingbats, or a non-embedded font named in a legacy CJK code page.
 */
async function encodingIsGuess(
  doc: PdfDocument,
  { font, enc, baseFont, type3 }: { font: PdfDict; enc: PdfObj; baseFont: string; type3: boolean },
): Promise<boolean> {
  if (type3) return false;
  if (/[^\x20-\x7e]/.test(baseFont)) return true;
  const name = baseFont.replace(/^[A-Z]{6}\+/, "");
  if (/^(Symbol|ZapfDingbats)/.test(name) && !(enc instanceof PdfName)) return true;
  const descriptor = await doc.resolveDict(font.get("FontDescriptor"));
  const flags = (await num(doc, descriptor?.get("Flags"))) ?? 0;
  const embedded =
    !!descriptor && (descriptor.has("FontFile") || descriptor.has("FontFile2") || descriptor.has("FontFile3"));
  const subtype = await doc.resolve(font.get("Subtype"));
  const trueType = subtype instanceof PdfName && subtype.name === "TrueType";
  const symbolic = (flags & 4) !== 0 && (flags & 32) === 0;
  if (trueType && symbolic && embedded && !(enc instanceof PdfName)) return true;
  const hasBase = enc instanceof PdfName || (enc instanceof PdfDict && enc.has("BaseEncoding"));
  return !hasBase && embedded && !STANDARD_TEXT_FONT.test(name);
}

async function num(doc: PdfDocument, o: PdfObj | undefined): Promise<number | null> {
  const v = await doc.resolve(o);
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/**
 * A Type 3 font's em in text space per unit of font size. Its glyph space is its own, so the em
 * is estimated from its /Widths, taking a lower-case letter to be half an em wide on average
 * (any glyph when it has no letters); 1 when it gives no widths.
 */
function type3Em(
  widths: Float64Array,
  { given, enc, scale }: { given: Uint8Array; enc: Encoding; scale: number },
): number {
  let letters = 0;
  let letterSum = 0;
  let any = 0;
  let anySum = 0;
  for (let c = 0; c < 256; c++) {
    const w = widths[c] * scale;
    if (!given[c] || !(w > 0)) continue;
    any++;
    anySum += w;
    if (/^[a-z]$/.test(enc[c] ?? "")) {
      letters++;
      letterSum += w;
    }
  }
  const em = letters ? letterSum / letters / 0.5 : any ? anySum / any / 0.5 : 1;
  return Math.min(Math.max(em, 1e-3), 1e3);
}

async function simpleDecoder(
  doc: PdfDocument,
  { font, toUnicode, type3 }: { font: PdfDict; toUnicode: ToUnicodeMap | null; type3: boolean },
): Promise<FontDecoder> {
  const enc = await doc.resolve(font.get("Encoding"));
  let table: string[] = [...STANDARD];
  if (enc instanceof PdfName) table = [...(namedEncoding(enc.name) ?? STANDARD)];
  else if (enc instanceof PdfDict) {
    const base = await doc.resolve(enc.get("BaseEncoding"));
    if (base instanceof PdfName) table = [...(namedEncoding(base.name) ?? STANDARD)];
    const diffs = await doc.resolve(enc.get("Differences"));
    if (Array.isArray(diffs)) {
      let code = 0;
      for (const d of diffs) {
        if (isInt(d)) code = d;
        else if (d instanceof PdfName) {
          if (code >= 0 && code < 256) table[code] = glyphText(d.name);
          code++;
        }
      }
    }
  }
  const enc8: Encoding = table;

  // Glyph widths (for word gaps): /Widths from /FirstChar, else standard-font estimates.
  const baseFont = await doc.resolve(font.get("BaseFont"));
  const guess =
    !toUnicode &&
    (await encodingIsGuess(doc, { font, enc, baseFont: baseFont instanceof PdfName ? baseFont.name : "", type3 }));
  const fallback = standardWidths(baseFont instanceof PdfName ? baseFont.name : "");
  const widths = new Float64Array(256);
  const given = new Uint8Array(256);
  for (let c = 0; c < 256; c++) widths[c] = fallback(c, enc8[c]);
  const w = await doc.resolve(font.get("Widths"));
  if (Array.isArray(w)) {
    const descriptor = await doc.resolveDict(font.get("FontDescriptor"));
    const missing = (await num(doc, descriptor?.get("MissingWidth"))) ?? null;
    const first = (await num(doc, font.get("FirstChar"))) ?? 0;
    if (missing !== null) widths.fill(missing);
    for (let i = 0; i < w.length && first + i < 256; i++) {
      const v = await num(doc, w[i]);
      if (v !== null && first + i >= 0) {
        widths[first + i] = v;
        given[first + i] = 1;
      }
    }
  }
  // Type 3 widths are in glyph space, mapped by /FontMatrix; other fonts use 1/1000 em.
  let scale = 0.001;
  let em = 1;
  if (type3) {
    const m = await doc.resolve(font.get("FontMatrix"));
    if (Array.isArray(m) && typeof m[0] === "number" && m[0] !== 0) scale = Math.abs(m[0]);
    const yScale = Array.isArray(m) && typeof m[3] === "number" && m[3] !== 0 ? Math.abs(m[3]) / scale : 1;
    em = type3Em(widths, { given, enc: enc8, scale }) * yScale;
  }
  return {
    em,
    decode(bytes, glyph) {
      let unmapped = 0;
      for (const b of bytes) {
        const t = (toUnicode && lookupToUnicode(toUnicode, b)) || enc8[b];
        if (!t) unmapped++;
        glyph(t ?? "", widths[b] * scale, b === 32);
      }
      return { glyphs: bytes.length, unmapped, guessed: guess ? bytes.length - unmapped : 0 };
    },
  };
}

/**
 * Per-CID metrics from a descendant font's /W (one width per CID) or /W2 (three numbers per CID,
 * the vertical displacement w1y first): `c [m1 m2 ...]` and `c1 c2 m` forms; `dflt` for the rest.
 */
async function cidMetrics(
  doc: PdfDocument,
  { arr, stride, dflt }: { arr: PdfObj | undefined; stride: number; dflt: number },
): Promise<(cid: number) => number> {
  const w = await doc.resolve(arr);
  if (!Array.isArray(w)) return () => dflt;
  const single = new Map<number, number>();
  const ranges: [number, number, number][] = [];
  for (let i = 0; i < w.length && single.size < MAX_CMAP_ENTRIES; ) {
    const c = await num(doc, w[i]);
    const next = await doc.resolve(w[i + 1]);
    if (c === null) break;
    if (Array.isArray(next)) {
      for (let k = 0; k * stride < next.length && single.size < MAX_CMAP_ENTRIES; k++) {
        const v = await num(doc, next[k * stride]);
        if (v !== null) single.set(c + k, v);
      }
      i += 2;
    } else {
      const c2 = typeof next === "number" ? next : null;
      const v = await num(doc, w[i + 2]);
      if (c2 === null || v === null) break;
      ranges.push([c, c2, v]);
      i += 2 + stride;
    }
  }
  return (cid) => {
    const v = single.get(cid);
    if (v !== undefined) return v;
    for (const [lo, hi, m] of ranges) if (cid >= lo && cid <= hi) return m;
    return dflt;
  };
}

/** The CID an encoding CMap gives a code (cidchar/cidrange), or null when it gives none. */
function cidOf(cids: ToUnicodeMap["cids"], code: number): number | null {
  let lo = 0;
  let hi = cids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = cids[mid];
    if (code < r.lo) hi = mid - 1;
    else if (code > r.hi) lo = mid + 1;
    else return r.cid + (code - r.lo);
  }
  return null;
}

async function type0Decoder(doc: PdfDocument, font: PdfDict, toUnicode: ToUnicodeMap | null): Promise<FontDecoder> {
  const enc = await doc.resolve(font.get("Encoding"));
  let codespace: Codespace[] = [];
  let unicodeCodes = false;
  let cmap: ToUnicodeMap | null = null;
  if (enc instanceof PdfName) {
    if (/UCS2|UTF16/.test(enc.name)) unicodeCodes = true;
  } else if (enc instanceof PdfStream) {
    cmap = await loadCMapStream(doc, enc);
    codespace = cmap?.codespace ?? [];
  }
  const identity = enc instanceof PdfName && /^Identity-[HV]$/.test(enc.name);
  if (codespace.length === 0 && !identity) codespace = toUnicode?.codespace ?? [];
  if (codespace.length === 0) codespace = [{ lo: [0, 0], hi: [255, 255] }];
  const vertical = enc instanceof PdfName ? /-V$/.test(enc.name) : !!cmap?.vertical;
  const descendants = await doc.resolve(font.get("DescendantFonts"));
  const cidFont = Array.isArray(descendants) ? await doc.resolveDict(descendants[0]) : null;
  const dw = (await num(doc, cidFont?.get("DW"))) ?? 1000;
  const dw2 = await doc.resolve(cidFont?.get("DW2"));
  const dw1y = Array.isArray(dw2) ? ((await num(doc, dw2[1])) ?? -1000) : -1000;
  const metricOf = vertical
    ? await cidMetrics(doc, { arr: cidFont?.get("W2"), stride: 3, dflt: dw1y })
    : await cidMetrics(doc, { arr: cidFont?.get("W"), stride: 1, dflt: dw });
  // Codes are CIDs under Identity-H/V; an embedded CMap maps them; a predefined one (UniGB-UCS2-H,
  // 90ms-RKSJ-H, ...) needs tables the own reader lacks, so its widths are the default.
  const cids = cmap?.cids ?? [];
  const approximate = !identity && cids.length === 0;
  const fallback = vertical ? dw1y : dw;
  return {
    vertical,
    approximate,
    decode(bytes, glyph) {
      let glyphs = 0;
      let unmapped = 0;
      for (let i = 0; i < bytes.length; ) {
        let n = matchCodespace(codespace, bytes, i);
        if (n === 0) n = Math.min(bytes.length - i, codespace[0].lo.length);
        const code = codeOf(bytes.subarray(i, i + n));
        i += n;
        glyphs++;
        let t = toUnicode ? lookupToUnicode(toUnicode, code) : undefined;
        if (!t && unicodeCodes) t = String.fromCharCode(code);
        if (!t) unmapped++;
        const cid = identity ? code : cidOf(cids, code);
        glyph(t ?? "", (cid === null ? fallback : metricOf(cid)) * 0.001, n === 1 && code === 32);
      }
      return { glyphs, unmapped, guessed: 0 };
    },
  };
}
