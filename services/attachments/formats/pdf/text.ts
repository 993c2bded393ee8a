/**
 * Text of one page from its content stream(s) (ISO 32000-1 §9.4): strings shown by `Tj`, `TJ`,
 * `'` and `"`, decoded through the current font (`Tf`).
 *
 * Layout comes from the text matrices: `Td`/`TD`/`Tm`/`T*` and glyph advances (font widths, `Tc`,
 * `Tw`, `Tz`, `TJ` adjustments) are tracked, so a string that starts on a new baseline (more than
 * half an em up or down, e.g. after `T*`, a `Td` with a y move, or in the next `BT`...`ET` block)
 * begins a new line, and one that starts a gap to the right of the previous string's end gets a
 * space. `T*`, `'` and `"` always break the line. Form XObjects (`Do`) are followed (bounded);
 * images and inline image data are skipped unread.
 */
import { visualToLogical } from "./bidi";
import type { PdfDocument } from "./document";
import { WIN_ANSI } from "./encodings";
import { loadFont, type FontDecoder } from "./fonts";
import { isWhite, Lexer } from "./lexer";
import { isName, PdfDict, PdfError, PdfKeyword, PdfName, type PdfObj, PdfStream, PdfString } from "./objects";
import type { PageLeaf } from "./page-tree";
import { parseObject } from "./parser";
import { concatBytes } from "../shared/bytes";

const MAX_FORM_DEPTH = 8;
const MAX_FORMS_PER_PAGE = 256;
const MAX_OPERANDS = 64;
/** Decoded content (page streams and forms together) one page may expand to. */
const MAX_PAGE_CONTENT_BYTES = 48 * 1024 * 1024;

/** For strings shown with no usable font selected (broken files): read the bytes as WinAnsi. */
const FALLBACK_FONT: FontDecoder = {
  decode(bytes) {
    let text = "";
    for (const b of bytes) text += WIN_ANSI[b];
    return { text, width: bytes.length * 0.5, glyphs: bytes.length, spaces: 0, unmapped: 0, guessed: 0 };
  },
};

/** Fonts decoded once per extraction and shared across pages. */
export interface TextContext {
  fonts: Map<PdfDict, FontDecoder>;
}

class TextSink {
  private parts: string[] = [];
  private lastChar = "";
  length = 0;
  /** Glyphs shown, and those the fonts gave no text for: the caller's cue to try another reader. */
  glyphs = 0;
  unmapped = 0;
  guessed = 0;
  truncated = false;
  constructor(private readonly maxChars: number) {}

  get full(): boolean {
    return this.length >= this.maxChars;
  }

  private push(s: string): void {
    if (this.full) {
      if (s) this.truncated = true;
      return;
    }
    if (this.length + s.length > this.maxChars) {
      s = s.slice(0, this.maxChars - this.length);
      this.truncated = true;
    }
    if (!s) return;
    this.parts.push(s);
    this.length += s.length;
    this.lastChar = s[s.length - 1];
  }

  text(s: string): void {
    // eslint-disable-next-line no-control-regex
    // Soft hyphens, zero-width spaces and BOMs are invisible on the page and would split words.
    this.push(s.replace(/\t/g, " ").replace(/[\u0000-\u0008\u000b-\u001f\u007f\u00ad\u200b\ufeff]/g, ""));
  }

  space(): void {
    if (this.length > 0 && !/\s/.test(this.lastChar)) this.push(" ");
  }

  lineBreak(): void {
    if (this.length > 0 && this.lastChar !== "\n") this.push("\n");
  }

  result(): string {
    return this.parts
      .join("")
      .split("\n")
      .map((l) => visualToLogical(l.replace(/\s+$/, "")))
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  }
}

/**
 * Where the last shown string ended, in the (unscaled by CTM) space of the text matrices, and
 * whether the next string must start a new line regardless of position.
 */
interface Layout {
  last: { x: number; y: number; size: number } | null;
  forceBreak: boolean;
}

/** Vertical move (in ems of the current font) that makes a new line; a smaller one is a sub/superscript. */
const NEW_LINE_EM = 0.5;
/** Horizontal gap (in ems) between two strings on a line that reads as a word space. */
const SPACE_EM = 0.2;

function num(o: PdfObj | undefined): number {
  return typeof o === "number" && Number.isFinite(o) ? o : 0;
}

/** Extracts the text of one page. Returns what was read before any damage in the content. */
export async function extractPageText(
  doc: PdfDocument,
  leaf: PageLeaf,
  ctx: TextContext,
  maxChars: number,
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
  const newline = Uint8Array.of(10);
  for (const s of streams) parts.push(await decode(doc, s, state), newline);
  const sink = new TextSink(maxChars);
  try {
    const layout: Layout = { last: null, forceBreak: false };
    const initial: TextState = { font: null, size: 0, charSpacing: 0, wordSpacing: 0, hScale: 1, leading: 0 };
    await interpret(doc, concatBytes(parts), leaf.resources, ctx, sink, state, layout, 0, initial);
  } catch (err) {
    // Damaged content: keep the text read so far; structural errors still surface.
    if (!(err instanceof PdfError) || err.message === "the PDF is encrypted" || err.message.startsWith("unsupported")) throw err;
  }
  return { text: sink.result(), truncated: sink.truncated, glyphs: sink.glyphs, unmapped: sink.unmapped, guessed: sink.guessed };
}

async function decode(doc: PdfDocument, s: PdfStream, state: { budget: number }): Promise<Uint8Array> {
  if (state.budget <= 0) throw new PdfError("the page's content is too large to read (over 48 MB decoded)");
  const bytes = await doc.streamBytes(s, state.budget);
  state.budget -= bytes.length;
  return bytes;
}

async function fontFor(doc: PdfDocument, resources: PdfDict | null, name: string, ctx: TextContext): Promise<FontDecoder | null> {
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
}

async function interpret(
  doc: PdfDocument,
  content: Uint8Array,
  resources: PdfDict | null,
  ctx: TextContext,
  sink: TextSink,
  state: { forms: number; budget: number },
  layout: Layout,
  depth: number,
  inherited: TextState,
): Promise<void> {
  const lx = new Lexer(content, 0, true);
  const operands: PdfObj[] = [];
  let ts: TextState = { ...inherited };
  const saved: TextState[] = [];
  // Text matrix [a b c d e f] and text line matrix (§9.4.2).
  let tm = [1, 0, 0, 1, 0, 0];
  let tlm = [1, 0, 0, 1, 0, 0];
  const moveLine = (tx: number, ty: number) => {
    tlm = [tlm[0], tlm[1], tlm[2], tlm[3], tx * tlm[0] + ty * tlm[2] + tlm[4], tx * tlm[1] + ty * tlm[3] + tlm[5]];
    tm = [...tlm];
  };
  const advance = (tx: number) => {
    tm[4] += tx * tm[0];
    tm[5] += tx * tm[1];
  };
  const show = (s: PdfObj | undefined) => {
    if (!(s instanceof PdfString)) return;
    const shown = (ts.font ?? FALLBACK_FONT).decode(s.bytes);
    sink.glyphs += shown.glyphs;
    sink.unmapped += shown.unmapped;
    sink.guessed += shown.guessed;
    const size = Math.max(1e-6, Math.abs(ts.size) * Math.hypot(tm[2], tm[3]));
    const x = tm[4];
    const y = tm[5];
    if (shown.text) {
      const last = layout.last;
      if (layout.forceBreak) sink.lineBreak();
      else if (last) {
        const em = Math.max(size, last.size);
        if (Math.abs(y - last.y) > NEW_LINE_EM * em) sink.lineBreak();
        else {
          const gap = x - last.x;
          if (gap > SPACE_EM * em || gap < -2 * em) sink.space();
        }
      }
      layout.forceBreak = false;
      sink.text(shown.text);
    }
    advance((shown.width * ts.size + shown.glyphs * ts.charSpacing + shown.spaces * ts.wordSpacing) * ts.hScale);
    if (shown.text) layout.last = { x: tm[4], y: tm[5], size };
  };
  const nextLine = () => {
    moveLine(0, -ts.leading);
    layout.forceBreak = true;
  };
  while (!sink.full && !lx.atEnd()) {
    const o = parseObject(lx);
    if (!(o instanceof PdfKeyword)) {
      if (operands.length >= MAX_OPERANDS) operands.shift();
      operands.push(o);
      continue;
    }
    const op = (i: number) => operands[operands.length - i];
    switch (o.word) {
      case "BT":
        tm = [1, 0, 0, 1, 0, 0];
        tlm = [1, 0, 0, 1, 0, 0];
        break;
      case "Tf": {
        const n = op(2);
        ts.font = n instanceof PdfName ? await fontFor(doc, resources, n.name, ctx) : null;
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
            else if (typeof e === "number") advance((-e / 1000) * ts.size * ts.hScale);
          }
        }
        break;
      }
      case "q":
        if (saved.length < 64) saved.push({ ...ts });
        break;
      case "Q":
        if (saved.length) ts = saved.pop()!;
        break;
      case "BI": {
        // Inline image: dictionary entries up to ID, then binary data up to EI.
        for (let i = 0; i < 256 && !lx.atEnd(); i++) {
          const k = parseObject(lx);
          if (k instanceof PdfKeyword && k.word === "ID") break;
        }
        skipInlineImage(lx);
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
        // A form has its own coordinates: its text starts a line, and so does what follows it.
        layout.forceBreak = true;
        await interpret(doc, await decode(doc, x, state), formRes, ctx, sink, state, layout, depth + 1, ts);
        layout.forceBreak = true;
        break;
      }
    }
    operands.length = 0;
  }
}
