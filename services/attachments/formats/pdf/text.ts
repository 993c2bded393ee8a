/**
 * Text of one page from its content stream(s) (ISO 32000-1 §9.4): strings shown by `Tj`, `TJ`,
 * `'` and `"`, decoded through the current font (`Tf`).
 *
 * Every glyph is placed in device space through the full text rendering matrix (§9.4.4): the CTM
 * (`cm`, saved and restored by `q`/`Q`, forms' /Matrix), the text matrices (`Tm`, `Td`, `TD`,
 * `T*`), font size, `Tz` and `Ts`, and advanced by its width plus `Tc`, `Tw` and `TJ` adjustments.
 * Glyphs outside the clip are dropped: the page's crop box, form /BBox, and clipping paths (`W`,
 * `W*`) taken as their bounding boxes. layout.ts turns the placed glyphs into words and lines.
 * Form XObjects (`Do`) are followed (bounded); images and inline image data are skipped unread.
 */
import type { PdfDocument } from "./document";
import { WIN_ANSI } from "./encodings";
import { loadFont, type FontDecoder } from "./fonts";
import {
  type Box,
  emptyBounds,
  growBounds,
  IDENTITY,
  intersect,
  type Matrix,
  multiply,
  readBox,
  readMatrix,
  transformBox,
} from "./geometry";
import { GlyphLayout, type PlacedGlyph, TextSink, WORD_GAP_EM } from "./layout";
import { isWhite, Lexer } from "./lexer";
import { byteSize, MAX_DECODED_BYTES } from "./filters";
import {
  isName,
  type PdfDict,
  PdfError,
  PdfKeyword,
  PdfName,
  type PdfObj,
  PdfStream,
  PdfString,
  PdfTooLarge,
} from "./objects";
import type { PageLeaf } from "./page-tree";
import { type ItemBudget, parseObject } from "./parser";
import { concatBytes } from "../shared/bytes";

const MAX_FORM_DEPTH = 8;
const MAX_FORMS_PER_PAGE = 256;
const MAX_OPERANDS = 64;
/**
 * Array elements and dictionary entries the operands of one operator may hold, nested ones
 * included: a `TJ` array of a long line has a few hundred. Past it they are read and dropped.
 */
const MAX_OPERAND_ITEMS = 65_536;
/**
 * Decoded content (page streams and forms together) one page may expand to. Past it the page is
 * refused (PdfTooLarge), never read in part. The largest page on the corpus bench is 3.2 MB.
 */
const MAX_PAGE_CONTENT_BYTES = MAX_DECODED_BYTES;

/** For strings shown with no usable font selected (broken files): read the bytes as WinAnsi. */
const FALLBACK_FONT: FontDecoder = {
  decode(bytes, glyph) {
    for (const b of bytes) glyph(WIN_ANSI[b], 0.5, b === 32);
    return { glyphs: bytes.length, unmapped: 0, guessed: 0 };
  },
};

/** Past the cap a glyph is only counted, never placed. */
const ignoreGlyph = () => {};

/** Fonts decoded once per extraction and shared across pages. */
export interface TextContext {
  fonts: Map<PdfDict, FontDecoder>;
}

/** Nested `q` beyond this many saved states are not restored (a damaged stream's runaway). */
const MAX_SAVED_STATES = 256;

function num(o: PdfObj | undefined): number {
  return typeof o === "number" && Number.isFinite(o) ? o : 0;
}

/**
 * Extracts the text of one page. Returns what was read before any damage in the content.
 *
 * Past `maxChars` the content is still read to its end (bounded by MAX_PAGE_CONTENT_BYTES), but
 * its glyphs are only counted, not placed: the counts (`glyphs`, `unmapped`, `guessed`) are the
 * whole page's whatever the cap, so the caller picks the same reader for a capped read and for
 * the read that goes on from its cut (or an uncapped one), and their texts agree.
 *
 * Content decoding past MAX_PAGE_CONTENT_BYTES (a form's included, wherever it comes) is a
 * PdfTooLarge for the whole page, whatever was read before it.
 */
export async function extractPageText(
  doc: PdfDocument,
  { leaf, ctx, maxChars }: { leaf: PageLeaf; ctx: TextContext; maxChars: number },
): Promise<{ text: string; truncated: boolean; glyphs: number; unmapped: number; guessed: number }> {
  const contents = await doc.resolve(leaf.dict.get("Contents"));
  const streams: PdfStream[] = [];
  if (contents instanceof PdfStream) streams.push(contents);
  else if (Array.isArray(contents)) {
    await doc.prefetch(contents);
    for (const c of contents) {
      const s = await doc.resolve(c);
      if (s instanceof PdfStream) streams.push(s);
    }
  }
  const state = { forms: 0, budget: MAX_PAGE_CONTENT_BYTES };
  const parts: Uint8Array[] = [];
  for (const s of streams) parts.push(await decode(doc, s, state));
  const sink = new TextSink(maxChars);
  const layout = new GlyphLayout(sink);
  try {
    const text: TextState = { font: null, size: 0, charSpacing: 0, wordSpacing: 0, hScale: 1, leading: 0, rise: 0 };
    await interpret(doc, {
      content: parts,
      resources: leaf.resources,
      ctx,
      layout,
      state,
      depth: 0,
      inherited: {
        ctm: IDENTITY,
        clip: leaf.box,
        text,
      },
    });
  } catch (err) {
    // Damaged content: keep the text read so far; structural errors still surface, and so does
    // content too large to read (a form's, or a font's CMap), which refuses the page whole.
    if (
      !(err instanceof PdfError) ||
      err instanceof PdfTooLarge ||
      err.message === "the PDF is encrypted" ||
      err.message.startsWith("unsupported")
    )
      throw err;
  }
  layout.finish();
  return {
    text: sink.result(),
    truncated: sink.truncated,
    glyphs: sink.glyphs,
    unmapped: sink.unmapped,
    guessed: sink.guessed,
  };
}

const pageTooLarge = () =>
  new PdfTooLarge(
    `its content decodes to more than ${byteSize(MAX_PAGE_CONTENT_BYTES)}, the most one page may have`,
    MAX_PAGE_CONTENT_BYTES,
  );

/** One content stream decoded within what is left of the page's budget. */
async function decode(doc: PdfDocument, s: PdfStream, state: { budget: number }): Promise<Uint8Array> {
  if (state.budget <= 0) throw pageTooLarge();
  try {
    const bytes = await doc.streamBytes(s, state.budget);
    state.budget -= bytes.length;
    return bytes;
  } catch (err) {
    // Past what is left of the page's budget (not some other limit met on the way, such as an
    // object stream's): said as the page's limit, since that is the one the page went past.
    if (err instanceof PdfTooLarge && err.limit === state.budget) throw pageTooLarge();
    throw err;
  }
}

const NEWLINE = Uint8Array.of(10);

/**
 * A page's content streams read as one, each from its own buffer, never joined into a copy of
 * them all. Streams split between tokens (§7.8.2), not always between objects: an operand array
 * or dictionary that runs on past a stream's end is read again from its start with the next
 * stream joined on (the one copy made, of that next stream only).
 */
class ContentReader {
  lx: Lexer;
  private part = 0;

  constructor(
    private readonly parts: Uint8Array[],
    /** What the operands of one operator may hold; the caller refills it at each operator. */
    readonly items: ItemBudget,
  ) {
    this.lx = new Lexer(parts[0] ?? new Uint8Array(0), 0, true);
  }

  /** Moves on to the next stream at the end of one; true at the end of the last. */
  atEnd(): boolean {
    while (this.lx.atEnd()) {
      if (this.part + 1 >= this.parts.length) return true;
      this.lx = new Lexer(this.parts[++this.part], 0, true);
    }
    return false;
  }

  next(): PdfObj | PdfKeyword {
    const lx = this.lx;
    const at = lx.pos;
    try {
      return parseObject(lx, 0, this.items);
    } catch (err) {
      if (!(err instanceof PdfError) || this.part + 1 >= this.parts.length || lx.pos < lx.buf.length) throw err;
      this.parts[this.part + 1] = concatBytes([lx.buf.subarray(at), NEWLINE, this.parts[this.part + 1]]);
      this.lx = new Lexer(this.parts[++this.part], 0, true);
      return this.next();
    }
  }
}

async function fontFor(
  doc: PdfDocument,
  { resources, name, ctx }: { resources: PdfDict | null; name: string; ctx: TextContext },
): Promise<FontDecoder | null> {
  const fonts = await doc.resolveDict(resources?.get("Font"));
  const font = await doc.resolveDict(fonts?.get(name));
  if (!font) return null;
  let dec = ctx.fonts.get(font);
  if (!dec) {
    dec = await loadFont(doc, font);
    ctx.fonts.set(font, dec);
  }
  return dec;
}

/** Skips inline image data after `ID`: up to `EI` between white space. */
function skipInlineImage(lx: Lexer): void {
  const b = lx.buf;
  let i = lx.pos + 1;
  for (; i + 1 < b.length; i++) {
    if (b[i] === 0x45 && b[i + 1] === 0x49 && isWhite(b[i - 1]) && (i + 2 >= b.length || isWhite(b[i + 2]))) {
      lx.pos = i + 2;
      return;
    }
  }
  lx.pos = b.length;
}

interface TextState {
  font: FontDecoder | null;
  size: number;
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  leading: number;
  rise: number;
}

/** The parts of the graphics state (§8.4) that decide where text lands and whether it shows. */
interface GraphicsState {
  ctm: Matrix;
  /** Device-space bound of the clipping region; null when nothing clips. */
  clip: Box | null;
  text: TextState;
}

const PAINT_PATH = new Set(["n", "f", "F", "f*", "S", "s", "B", "B*", "b", "b*"]);

async function interpret(
  doc: PdfDocument,
  {
    content,
    resources,
    ctx,
    layout,
    state,
    depth,
    inherited,
  }: {
    /** The content streams, in order: one for a form. */
    content: Uint8Array[];
    resources: PdfDict | null;
    ctx: TextContext;
    layout: GlyphLayout;
    state: { forms: number; budget: number };
    depth: number;
    inherited: GraphicsState;
  },
): Promise<void> {
  const sink = layout.sink;
  const src = new ContentReader([...content], { left: MAX_OPERAND_ITEMS });
  const operands: PdfObj[] = [];
  let gs: GraphicsState = { ...inherited, text: { ...inherited.text } };
  const saved: GraphicsState[] = [];
  let unsaved = 0;
  // Text matrix [a b c d e f] and text line matrix (§9.4.2).
  let tm: [number, number, number, number, number, number] = [1, 0, 0, 1, 0, 0];
  let tlm: Matrix = IDENTITY;
  const moveLine = (tx: number, ty: number) => {
    tlm = [tlm[0], tlm[1], tlm[2], tlm[3], tx * tlm[0] + ty * tlm[2] + tlm[4], tx * tlm[1] + ty * tlm[3] + tlm[5]];
    tm = [...tlm];
  };
  /** Moves the text matrix along the line: text space x, or y in vertical writing. */
  const advance = (d: number, vertical: boolean) => {
    tm[4] += d * (vertical ? tm[2] : tm[0]);
    tm[5] += d * (vertical ? tm[3] : tm[1]);
  };
  // The current path's bounding box in device space (empty while x0 > x1), and whether `W`/`W*`
  // made it the next clip.
  let path = emptyBounds();
  let clipPending = false;
  const pathPoint = (x: number, y: number) => growBounds(path, gs.ctm, x, y);
  // Whether the word the current text operator is showing was kept (by its first glyph); null
  // between words.
  let word: boolean | null = null;
  // The glyph handed to the layout, one object filled in afresh for every glyph shown.
  const placed: PlacedGlyph = { text: "", x: 0, y: 0, ex: 0, ey: 0, dx: 0, dy: 0, em: 0 };
  // Set once the text is full (checked between operators): what follows is only counted.
  let pastCap = false;
  const show = (s: PdfObj | undefined) => {
    if (!(s instanceof PdfString)) return;
    const t = gs.text;
    const font = t.font ?? FALLBACK_FONT;
    if (pastCap) {
      const counts = font.decode(s.bytes, ignoreGlyph);
      sink.glyphs += counts.glyphs;
      sink.unmapped += counts.unmapped;
      sink.guessed += counts.guessed;
      return;
    }
    const clip = gs.clip;
    const vertical = !!font.vertical;
    // Text space to device space before this string's advance (§9.4.4); each glyph's own scaling
    // by size and Tz is in its advance below.
    const m = multiply(tm, gs.ctm);
    const ox = m[4] + t.rise * m[2];
    const oy = m[5] + t.rise * m[3];
    // The pen moves along text space x, or y in vertical writing; `em` is the font's size across it.
    const ax = vertical ? m[2] : m[0];
    const ay = vertical ? m[3] : m[1];
    const length = Math.hypot(ax, ay) || 1;
    const fontSize = t.size * (font.em ?? 1);
    const em = Math.abs(fontSize) * Math.hypot(vertical ? m[0] : m[2], vertical ? m[1] : m[3]);
    const scale = vertical ? 1 : t.hScale;
    // Horizontal glyphs are tested for clipping a third of an em above the middle of their
    // advance; vertical ones are centred on the pen already.
    const upX = vertical ? 0 : 0.3 * fontSize * m[2];
    const upY = vertical ? 0 : 0.3 * fontSize * m[3];
    // Widths that are a guess would spread a string wrongly: its first glyph decides for all.
    let shown: boolean | null = null;
    // A word gap made by character spacing alone.
    const spacedOut = Math.abs(t.charSpacing * scale) * length > WORD_GAP_EM * em;
    let pen = 0;
    const counts = font.decode(s.bytes, (text, width, wordSpace) => {
      const w = width * t.size * scale;
      const step = w + (t.charSpacing + (wordSpace ? t.wordSpacing : 0)) * scale;
      // Which way the pen goes: down in vertical writing, back for a negative size or Tz.
      const sign = (w || (vertical ? -t.size : t.size * t.hScale)) < 0 ? -1 : 1;
      if (!text.trim()) {
        if (text) layout.space(sign * step * length, em);
        word = null;
      } else {
        const x = ox + pen * ax;
        const y = oy + pen * ay;
        const ex = x + w * ax;
        const ey = y + w * ay;
        if (shown === null || !font.approximate) {
          const cx = (x + ex) / 2 + upX;
          const cy = (y + ey) / 2 + upY;
          // A word cut by the clip's edge goes whole with its first glyph: never half read.
          shown = word ?? (!clip || (cx >= clip[0] && cx <= clip[2] && cy >= clip[1] && cy <= clip[3]));
        }
        if (shown) {
          placed.text = text;
          placed.x = x;
          placed.y = y;
          placed.ex = ex;
          placed.ey = ey;
          placed.dx = (sign * ax) / length;
          placed.dy = (sign * ay) / length;
          placed.em = em;
          layout.glyph(placed);
        }
        word = spacedOut ? null : shown;
      }
      pen += step;
    });
    sink.glyphs += counts.glyphs;
    sink.unmapped += counts.unmapped;
    sink.guessed += counts.guessed;
    advance(pen, vertical);
  };
  const nextLine = () => {
    moveLine(0, -gs.text.leading);
    layout.lineMove();
  };
  while (!src.atEnd()) {
    pastCap = sink.full;
    const o = src.next();
    word = null;
    if (!(o instanceof PdfKeyword)) {
      if (operands.length >= MAX_OPERANDS) operands.shift();
      operands.push(o);
      continue;
    }
    const op = (i: number) => operands[operands.length - i];
    const ts = gs.text;
    switch (o.word) {
      case "BT":
        tm = [1, 0, 0, 1, 0, 0];
        tlm = IDENTITY;
        break;
      case "Tf": {
        const n = op(2);
        ts.font = n instanceof PdfName ? await fontFor(doc, { resources, name: n.name, ctx }) : null;
        ts.size = num(op(1));
        break;
      }
      case "Tc":
        ts.charSpacing = num(op(1));
        break;
      case "Tw":
        ts.wordSpacing = num(op(1));
        break;
      case "Tz":
        ts.hScale = num(op(1)) / 100;
        break;
      case "TL":
        ts.leading = num(op(1));
        break;
      case "Ts":
        ts.rise = num(op(1));
        break;
      case "Td":
        moveLine(num(op(2)), num(op(1)));
        break;
      case "TD":
        ts.leading = -num(op(1));
        moveLine(num(op(2)), num(op(1)));
        break;
      case "Tm":
        if (operands.length >= 6) {
          tlm = [num(op(6)), num(op(5)), num(op(4)), num(op(3)), num(op(2)), num(op(1))];
          tm = [...tlm];
        }
        break;
      case "T*":
        nextLine();
        break;
      case "Tj":
        show(op(1));
        break;
      case "'":
        nextLine();
        show(op(1));
        break;
      case '"':
        ts.wordSpacing = num(op(3));
        ts.charSpacing = num(op(2));
        nextLine();
        show(op(1));
        break;
      case "TJ": {
        const arr = op(1);
        if (Array.isArray(arr)) {
          for (const e of arr) {
            if (e instanceof PdfString) show(e);
            else if (typeof e === "number") {
              const vertical = !!ts.font?.vertical;
              const d = (-e / 1000) * ts.size * (vertical ? 1 : ts.hScale);
              if (Math.abs(d) > WORD_GAP_EM * Math.abs(ts.size * (ts.font?.em ?? 1))) word = null;
              advance(d, vertical);
            }
          }
        }
        break;
      }
      case "q":
        if (saved.length < MAX_SAVED_STATES) saved.push({ ...gs, text: { ...ts } });
        else unsaved++;
        break;
      case "Q":
        if (unsaved > 0) unsaved--;
        else if (saved.length) gs = saved.pop()!;
        break;
      case "cm":
        if (operands.length >= 6)
          gs.ctm = multiply([num(op(6)), num(op(5)), num(op(4)), num(op(3)), num(op(2)), num(op(1))], gs.ctm);
        break;
      case "m":
      case "l":
        pathPoint(num(op(2)), num(op(1)));
        break;
      case "c":
        pathPoint(num(op(6)), num(op(5)));
        pathPoint(num(op(4)), num(op(3)));
        pathPoint(num(op(2)), num(op(1)));
        break;
      case "v":
      case "y":
        pathPoint(num(op(4)), num(op(3)));
        pathPoint(num(op(2)), num(op(1)));
        break;
      case "re": {
        const [x, y, w, h] = [num(op(4)), num(op(3)), num(op(2)), num(op(1))];
        pathPoint(x, y);
        pathPoint(x + w, y);
        pathPoint(x, y + h);
        pathPoint(x + w, y + h);
        break;
      }
      case "W":
      case "W*":
        clipPending = true;
        break;
      case "BI": {
        // Inline image: dictionary entries up to ID, then binary data up to EI.
        for (let i = 0; i < 256 && !src.lx.atEnd(); i++) {
          const k = parseObject(src.lx, 0, src.items);
          if (k instanceof PdfKeyword && k.word === "ID") break;
        }
        skipInlineImage(src.lx);
        break;
      }
      case "Do": {
        const n = op(1);
        if (!(n instanceof PdfName) || depth >= MAX_FORM_DEPTH || state.forms >= MAX_FORMS_PER_PAGE) break;
        const xobjects = await doc.resolveDict(resources?.get("XObject"));
        const x = await doc.resolve(xobjects?.get(n.name));
        // Only forms carry text; an image's data is never read.
        if (!(x instanceof PdfStream) || !isName(x.dict.get("Subtype"), "Form")) break;
        state.forms++;
        const formRes = (await doc.resolveDict(x.dict.get("Resources"))) ?? resources;
        // A form draws in its own space (/Matrix) within its /BBox, on a copy of the state (§8.10).
        const ctm = multiply((await readMatrix(doc, x.dict.get("Matrix"))) ?? IDENTITY, gs.ctm);
        const bbox = await readBox(doc, x.dict.get("BBox"));
        const clip = bbox ? intersect(gs.clip, transformBox(bbox, ctm)) : gs.clip;
        layout.lineMove();
        await interpret(doc, {
          content: [await decode(doc, x, state)],
          resources: formRes,
          ctx,
          layout,
          state,
          depth: depth + 1,
          inherited: {
            ctm,
            clip,
            text: ts,
          },
        });
        layout.lineMove();
        break;
      }
      default:
        if (PAINT_PATH.has(o.word)) {
          // A clipping path takes effect once the path is painted (or ended by `n`); its bounding box stands for it.
          if (clipPending && path[0] <= path[2]) gs.clip = intersect(gs.clip, path);
          path = emptyBounds();
          clipPending = false;
        }
    }
    operands.length = 0;
    src.items.left = MAX_OPERAND_ITEMS;
  }
}
