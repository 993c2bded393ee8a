/**
 * Words and lines from where glyphs land on the page, as pdf.js and poppler find them. Each glyph
 * comes with its origin and the end of its advance in device space, the unit vector of its writing
 * direction and its font size there; gaps are measured from the end of the previous glyph.
 * - A move of the baseline across the writing direction by more than NEW_LINE_EM, or a change of
 *   direction, starts a new line; so does a jump back along the line by more than BACK_EM when
 *   the content asked for a new line (`T*`, `'`, `"`, a form's start or end), else it is a space.
 * - Along the writing direction, a gap wider than SPACE_EM is a word space: character spacing,
 *   `TJ` adjustments and `Td` moves count by the room they take. A space glyph is a word space
 *   when it advances by more than LITERAL_SPACE_EM (one cancelled by `Tw` is none), wherever the
 *   next glyph lands: widths the reader only estimates may hide its gap.
 * - Letter-spaced lines (every gap between glyphs wider than SPACE_EM, the narrowest within
 *   MAX_TRACKING_EM, as `Tc` tracking makes them) read as words: only gaps wider than the
 *   narrowest by SPACE_EM are spaces. Deciding that takes the whole line, so a line is held until
 *   it ends (at most MAX_LINE_GLYPHS glyphs).
 * - A glyph drawn again on the same line where the same glyph already stands (fake bold: text
 *   drawn twice a hair apart, glyph by glyph or a run at a time) is dropped.
 * Glyphs come in content-stream order; no reordering into columns is attempted.
 */
import { visualToLogical } from "./bidi";
import { sliceWhole, wholeAt } from "../../../../core/text-cut";

/** Gap (in ems of the larger font) that reads as a word space; kerning stays below it. */
const SPACE_EM = 0.12;
export const WORD_GAP_EM = SPACE_EM;
/** Advance (in ems) a space glyph must make to count; one cancelled by `Tw` makes none. */
const LITERAL_SPACE_EM = 0.05;
/** Widest letter spacing (in ems) taken for tracking rather than word spaces. */
const MAX_TRACKING_EM = 0.25;
/** Baseline shift (in ems) that makes a new line; a smaller one is a sub- or superscript. */
const NEW_LINE_EM = 0.5;
/** A jump back along the line (in ems) past which the text starts over on a new line. */
const BACK_EM = 2;
/** Distance (in ems) within which the same glyph drawn again is a duplicate. */
const DUPLICATE_EM = 0.1;
/** Cosine of the largest angle between writing directions still on one line (about 8 degrees). */
const SAME_DIRECTION = 0.99;
/** A line longer than this is written out in parts. */
const MAX_LINE_GLYPHS = 4096;
/** How far back on the line a duplicate is looked for. */
const DUPLICATE_WINDOW = 256;

/** What came between a glyph and the one before it on the line. */
const GAP_PLAIN = 0;
const GAP_LITERAL_SPACE = 1;
const GAP_JUMP_BACK = 2;

// Soft hyphens, zero-width spaces and BOMs are invisible on the page and would split words.
// eslint-disable-next-line no-control-regex
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this cleaner strips from extracted text
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f\u00ad\u200b\ufeff]/g;
// eslint-disable-next-line no-control-regex
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this check looks for
const NEEDS_CLEANING = /[\t\u0000-\u0008\u000b-\u001f\u007f\u00ad\u200b\ufeff]/;

/**
 * A line longer than this (in UTF-16 units) is put in reading order in parts: a cut page must hold
 * the whole of the part its cut falls in, so this bounds what is read past the cap.
 */
const MAX_REORDER_CHARS = 4096;

/**
 * A line (or part of one) in reading order; a font may map a glyph to a newline, which ends a line
 * too. Trailing spaces go where a line ends (`ends`: the part is the rest of its line).
 */
function inReadingOrder(s: string, ends: boolean): string {
  const lines = s.split("\n");
  return lines.map((l, i) => visualToLogical(ends || i < lines.length - 1 ? l.replace(/\s+$/, "") : l)).join("\n");
}

/**
 * The page's text in reading order, cut at `maxChars`. Lines are put in reading order (bidi.ts)
 * before the cut, never after: a mostly right-to-left line reads from its visual end, so a cut
 * made first would keep the wrong end of the line. Each finished line (or part of one) is the same
 * whatever the cap, so the text of a cut page is always a prefix of the whole page's text, and a
 * read that goes on at the cut's length neither skips nor repeats text.
 */
export class TextSink {
  /** Finished lines, in reading order. */
  private readonly done: string[] = [];
  private doneLength = 0;
  /** The line being written, in visual order. */
  private line = "";
  private lastChar = "";
  /** Characters written so far, in visual order. */
  length = 0;
  /** Glyphs shown, and those the fonts gave no text for: the caller's cue to try another reader. */
  glyphs = 0;
  unmapped = 0;
  guessed = 0;
  truncated = false;
  constructor(private readonly maxChars: number) {}

  /** Finished text covers the cap: the rest of the page is not needed. */
  get full(): boolean {
    return this.doneLength >= this.maxChars;
  }

  private push(s: string): void {
    if (!s) return;
    if (this.full) {
      this.truncated = true;
      return;
    }
    this.line += s;
    this.length += s.length;
    this.lastChar = s[s.length - 1];
    // A line too long to hold is finished in parts, at the same places whatever the cap.
    while (this.line.length >= MAX_REORDER_CHARS && !this.full) {
      const at = wholeAt(this.line, MAX_REORDER_CHARS);
      this.finish(inReadingOrder(this.line.slice(0, at), false));
      this.line = this.line.slice(at);
    }
  }

  private finish(s: string): void {
    this.done.push(s);
    this.doneLength += s.length;
  }

  text(s: string): void {
    this.push(NEEDS_CLEANING.test(s) ? s.replace(/\t/g, " ").replace(INVISIBLE, "") : s);
  }

  space(): void {
    if (this.length > 0 && !/\s/.test(this.lastChar)) this.push(" ");
  }

  lineBreak(): void {
    if (this.length === 0 || this.lastChar === "\n" || this.full) return;
    this.finish(`${inReadingOrder(this.line, true)}\n`);
    this.line = "";
    this.lastChar = "\n";
    this.length++;
  }

  result(): string {
    // Once full, what is left of the line is a part it would not end with when read whole: dropped.
    if (this.full) {
      if (this.line) this.truncated = true;
    } else this.finish(inReadingOrder(this.line, true));
    this.line = "";
    const text = this.done
      .join("")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    if (text.length <= this.maxChars) return text;
    this.truncated = true;
    return sliceWhole(text, 0, this.maxChars);
  }
}

/**
 * A glyph with text as placed on the page: origin (x, y), end of its advance (ex, ey), unit
 * writing direction (dx, dy) and font size `em`, all in device space.
 */
export interface PlacedGlyph {
  text: string;
  x: number;
  y: number;
  ex: number;
  ey: number;
  dx: number;
  dy: number;
  em: number;
}

export class GlyphLayout {
  private placed = false;
  private endX = 0;
  private endY = 0;
  private dirX = 1;
  private dirY = 0;
  private em = 0;
  private spaceShown = false;
  private lineAsked = false;
  // The line being built: each glyph's text and origin, and the gap before it (in ems) and its kind.
  private readonly texts: string[] = [];
  private readonly xs: number[] = [];
  private readonly ys: number[] = [];
  private readonly gaps: number[] = [];
  private readonly kinds: number[] = [];

  constructor(readonly sink: TextSink) {}

  /**
   * A space glyph was shown, advancing by `room` in device space with the font at size `em`: a
   * word space unless it takes (next to) no room.
   */
  space(room: number, em: number): void {
    if (room > LITERAL_SPACE_EM * em) this.spaceShown = true;
  }

  /** The content moved to a new line or into or out of a form. */
  lineMove(): void {
    this.lineAsked = true;
  }

  /**
   * One glyph with text (not a space), all in device space. The caller may reuse one object for
   * every glyph (no allocation per glyph): what is kept is copied out of it.
   */
  glyph(g: PlacedGlyph): void {
    const { text, x, y, ex, ey, dx, dy, em } = g;
    let gap = 0;
    let kind = GAP_PLAIN;
    if (this.placed) {
      const size = Math.max(em, this.em, 1e-9);
      const vx = x - this.endX;
      const vy = y - this.endY;
      const along = vx * this.dirX + vy * this.dirY;
      const across = vy * this.dirX - vx * this.dirY;
      const back = along < -BACK_EM * size;
      const newLine =
        Math.abs(across) > NEW_LINE_EM * size ||
        dx * this.dirX + dy * this.dirY < SAME_DIRECTION ||
        (back && this.lineAsked);
      if ((newLine || along < 0) && this.isDuplicate(g)) return;
      if (newLine) {
        this.flushLine();
        this.sink.lineBreak();
      } else {
        gap = along / size;
        kind = back ? GAP_JUMP_BACK : this.spaceShown ? GAP_LITERAL_SPACE : GAP_PLAIN;
      }
    }
    if (this.texts.length >= MAX_LINE_GLYPHS) this.flushLine();
    this.texts.push(text);
    this.xs.push(x);
    this.ys.push(y);
    this.gaps.push(gap);
    this.kinds.push(kind);
    this.spaceShown = false;
    this.lineAsked = false;
    this.placed = true;
    this.endX = ex;
    this.endY = ey;
    this.dirX = dx;
    this.dirY = dy;
    this.em = em;
  }

  /** Writes out the line still held; call once the page's content is read. */
  finish(): void {
    this.flushLine();
  }

  private isDuplicate({ text, x, y, em }: PlacedGlyph): boolean {
    const near = DUPLICATE_EM * em;
    if (!(near > 0)) return false; // text of no size: every glyph lands on the same spot
    for (let i = this.texts.length - 1; i >= 0 && i >= this.texts.length - DUPLICATE_WINDOW; i--) {
      if (this.texts[i] === text && Math.abs(this.xs[i] - x) <= near && Math.abs(this.ys[i] - y) <= near) return true;
    }
    return false;
  }

  private flushLine(): void {
    const n = this.texts.length;
    // Letter-spaced: every plain gap on the line is wide, the narrowest within tracking range.
    let narrowest = Infinity;
    let plain = 0;
    for (let i = 1; i < n && narrowest > SPACE_EM; i++) {
      if (this.kinds[i] !== GAP_PLAIN) continue;
      plain++;
      narrowest = Math.min(narrowest, this.gaps[i]);
    }
    const space = plain >= 2 && narrowest > SPACE_EM && narrowest <= MAX_TRACKING_EM ? narrowest + SPACE_EM : SPACE_EM;
    for (let i = 0; i < n; i++) {
      const kind = this.kinds[i];
      // A line's first glyph has no gap, unless the line is the rest of one too long to hold.
      if (kind !== GAP_PLAIN || this.gaps[i] > space) this.sink.space();
      this.sink.text(this.texts[i]);
    }
    this.texts.length = 0;
    this.xs.length = 0;
    this.ys.length = 0;
    this.gaps.length = 0;
    this.kinds.length = 0;
  }
}
