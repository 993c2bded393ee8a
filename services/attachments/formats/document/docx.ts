// The text of a DOCX, one line per paragraph, from word/document.xml inflated as a stream and
// tokenised as it arrives: the text kept is capped at maxChars while the paragraph count still
// covers the whole document (the upload note states it).
import { AttachmentFormatError } from "../shared/errors";
import type { RangeReader } from "../shared/range-reader";
import { findZipEntry, listZip, readZipEntry, streamZipText, type ZipEntry } from "../shared/zip";

export interface DocxText {
  text: string;
  paragraphs: number;
  truncated: boolean;
  /** Set when the document was too large to count to the end: paragraphs is a lower bound. */
  approximate?: boolean;
  /** The most text held at once while reading (every open paragraph's kept part): what bounds its memory. */
  peakHeldChars: number;
}

// Past this much XML after the text cap, counting paragraphs stops.
const COUNT_LIMIT_BYTES = 64 * 1024 * 1024;
// Text kept before fromChar: what a text box ending inside a paragraph is guessed to shift the
// paragraph by at most. A longer one makes a second pass (see docxText).
const DROP_MARGIN = 64 * 1024;
// Text between two tags (or one tag) longer than this is not a Word document.
const MAX_PENDING_CHARS = 16 * 1024 * 1024;

function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (m, e: string) => {
    if (e[0] !== "#") return ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" } as Record<string, string>)[e];
    const code = e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
  });
}

async function documentEntry(reader: RangeReader): Promise<ZipEntry> {
  const entries = await listZip(reader);
  let entry = findZipEntry(entries, "word/document.xml");
  if (!entry) {
    // The package relationships name the main part when a writer chose another name.
    const rels = findZipEntry(entries, "_rels/.rels");
    if (rels) {
      const xml = new TextDecoder().decode(await readZipEntry(reader, rels, { maxBytes: 1024 * 1024 }));
      for (const m of xml.matchAll(/<(?:[\w.-]+:)?Relationship\b([^>]*)>/g)) {
        if (!/Type\s*=\s*["'][^"']*\/officeDocument["']/.test(m[1])) continue;
        const target = /Target\s*=\s*["']([^"']*)["']/.exec(m[1])?.[1];
        if (target) entry = findZipEntry(entries, target.replace(/^\/+/, ""));
      }
    }
  }
  if (!entry) throw new AttachmentFormatError("missing_entry", "not a DOCX document: word/document.xml is missing");
  return entry;
}

/** A paragraph being read. */
interface OpenParagraph {
  /** Its text as kept: what lies before fromChar may be cut from the front, what lies past maxChars from the back. */
  text: string;
  /** Chars cut from the front. */
  dropped: number;
  /** Chars cut from the back. */
  cutTail: number;
  /** Its text reaches past maxChars: what it gets from now on lies past the cap too. */
  over: boolean;
  /** Its place among the paragraphs opened so far: the same in every pass over the document. */
  ordinal: number;
  /** Where its text goes out, when a first pass found its front cut on a wrong guess. */
  start?: number;
}

interface ReadPass {
  entry: ZipEntry;
  maxChars: number;
  fromChar: number;
  /** Text starts, by ordinal, of the paragraphs a first pass cut too much from. */
  known: Map<number, number>;
}

/**
 * Paragraphs as lines, <w:tab/> as a tab, <w:br/> as a newline; text capped at maxChars (default
 * 100,000). With `fromChar`, the text starts there: what comes before it is counted, not kept, so
 * a page read deep into a document holds that page (and the paragraph it is in), not all before it;
 * and the read stops at the cap instead of counting the rest's paragraphs.
 */
export async function docxText(
  reader: RangeReader,
  opts: { maxChars?: number; fromChar?: number } = {},
): Promise<DocxText> {
  const maxChars = Math.max(0, opts.maxChars ?? 100_000);
  const fromChar = Math.max(0, opts.fromChar ?? 0);
  const entry = await documentEntry(reader);
  const first = await readPass(reader, { entry, maxChars, fromChar, known: new Map() });
  if (first.misplaced.size === 0) return first.result;
  // A text box longer than DROP_MARGIN moved a paragraph whose front was cut as if it would not:
  // the first pass found where each such paragraph goes out, and a second cuts them by that. Every
  // other paragraph is read as in the first pass (what is cut never changes where anything goes
  // out), so none is misplaced again.
  const again = await readPass(reader, { entry, maxChars, fromChar, known: first.misplaced });
  return { ...again.result, peakHeldChars: Math.max(first.result.peakHeldChars, again.result.peakHeldChars) };
}

async function readPass(
  reader: RangeReader,
  { entry, maxChars, fromChar, known }: ReadPass,
): Promise<{ result: DocxText; misplaced: Map<number, number> }> {
  const out: string[] = [];
  let outChars = 0;
  let truncated = false;
  let paragraphs = 0;
  let opened = 0;
  const misplaced = new Map<number, number>();
  // Paragraphs nest (a text box inside a run holds its own), outermost first; the innermost goes
  // out first, each when it closes. Held text is capped as one total over all of them: a paragraph
  // cannot go out before the ones inside it, so the earliest place each can take is known, and
  // what lies past maxChars from there is cut, from the outermost in. open[0..dead) lie wholly past
  // it; `lens` sums the lengths (kept and cut) of the others.
  const open: OpenParagraph[] = [];
  let dead = 0;
  let lens = 0;
  let held = 0;
  let peakHeld = 0;
  let inText = false;
  let runDepth = 0;
  // mc:Fallback repeats an mc:Choice's content for old readers; reading both would double it.
  let fallbackDepth = 0;
  let countedToEnd = true;

  const lengthOf = (p: OpenParagraph) => p.dropped + p.text.length + p.cutTail;
  // The newline before a paragraph: every one has it but the first to go out.
  const sepOf = (j: number) => (j < open.length - 1 || paragraphs > 0 ? 1 : 0);
  /** The earliest the outermost paragraph not wholly past maxChars can end. */
  const liveEnd = () => outChars + lens + (open.length - dead) - (paragraphs === 0 && open.length > dead ? 1 : 0);

  /** Cuts, from the outermost paragraph in, the held text that can only go out past maxChars. */
  const capHeld = () => {
    let end = liveEnd();
    while (dead < open.length && end > maxChars) {
      const p = open[dead];
      const cut = Math.min(p.text.length, end - p.cutTail - maxChars);
      if (cut > 0) {
        p.text = p.text.slice(0, p.text.length - cut);
        p.cutTail += cut;
        held -= cut;
      }
      p.over = true;
      const length = lengthOf(p);
      const start = end - length - sepOf(dead);
      if (start < maxChars) return;
      lens -= length;
      dead++;
      end = start;
    }
  };

  // Before fromChar, the innermost paragraph's text is cut from the front (in pieces of at least
  // DROP_MARGIN, so the cutting stays linear, or whatever there is when a paragraph opens inside
  // it). Where it goes out is a guess until it closes: text boxes inside it go out before it and
  // move it later, so DROP_MARGIN before fromChar is kept, unless a first pass told its place.
  const cutFront = (p: OpenParagraph, anySize: boolean) => {
    const at = (p.start ?? outChars + sepOf(open.length - 1)) + p.dropped;
    const cut = Math.min(p.text.length, fromChar - (p.start === undefined ? DROP_MARGIN : 0) - at);
    if (cut <= 0 || (cut < p.text.length && cut < DROP_MARGIN && !anySize)) return;
    p.text = p.text.slice(cut);
    p.dropped += cut;
    held -= cut;
  };

  // A hostile paragraph of millions of runs, or thousands nested, stays within the cap.
  const add = (s: string) => {
    const p = open[open.length - 1];
    if (truncated || !p) return;
    // Past the cap, text is counted, not kept: lengths stay those of the document in every pass.
    if (open.length > dead) lens += s.length;
    if (p.over) {
      p.cutTail += s.length;
      return;
    }
    p.text += s;
    held += s.length;
    if (fromChar > 0) cutFront(p, false);
    // A paragraph whose place a first pass found needs nothing past the cap from there.
    const past = p.start === undefined ? 0 : Math.min(p.text.length, p.start + p.dropped + p.text.length - maxChars);
    if (past > 0) {
      p.text = p.text.slice(0, p.text.length - past);
      p.cutTail += past;
      p.over = true;
      held -= past;
    }
    if (liveEnd() > maxChars) capHeld();
    if (held > peakHeld) peakHeld = held;
  };

  /** A paragraph goes out: the part of its line from fromChar up to the cap is kept. */
  const endParagraph = (p: OpenParagraph) => {
    paragraphs++;
    if (truncated) return;
    const sep = paragraphs > 1 ? 1 : 0;
    const at = outChars;
    const length = sep + lengthOf(p);
    const end = Math.min(at + length, maxChars);
    const lo = Math.max(at, fromChar);
    const textAt = at + sep + p.dropped;
    if (end > lo) {
      const from = Math.max(lo, textAt);
      out.push((lo < at + sep ? "\n" : "") + (end > from ? p.text.slice(from - textAt, end - textAt) : ""));
    }
    // Text boxes moved it further than the guess its front was cut by: text of this read is lost.
    if (p.dropped > 0 && Math.min(textAt, maxChars) > Math.max(at + sep, fromChar)) misplaced.set(p.ordinal, at + sep);
    if (p.over || at + length > maxChars) {
      outChars = maxChars;
      truncated = true;
      return;
    }
    outChars += length;
  };

  const close = () => {
    const p = open.pop();
    if (!p) return;
    if (open.length < dead) dead = open.length;
    else lens -= lengthOf(p);
    held -= p.text.length;
    endParagraph(p);
  };

  let sawRoot = false;
  const onTag = (tag: string) => {
    if (tag[0] === "?" || tag[0] === "!") return;
    if (!sawRoot) {
      // The relationships fallback could name any part; only a WordprocessingML body is read.
      if (!/^([\w.-]+:)?document$/.test(/^[\w:.-]+/.exec(tag)?.[0] ?? "")) {
        throw new AttachmentFormatError(
          "missing_entry",
          `not a DOCX document: ${entry.name} is not a WordprocessingML document`,
        );
      }
      sawRoot = true;
      return;
    }
    const closing = tag[0] === "/";
    const selfClosing = tag.endsWith("/");
    const name = /^\/?([\w:.-]+)/.exec(tag)?.[1] ?? "";
    if (name.endsWith(":Fallback") && !selfClosing) {
      fallbackDepth += closing ? -1 : 1;
      return;
    }
    if (fallbackDepth > 0) return;
    switch (name) {
      case "w:p":
        if (selfClosing) {
          endParagraph({ text: "", dropped: 0, cutTail: 0, over: false, ordinal: -1 });
          // Going out first, it moves the open paragraphs later.
          if (!truncated && liveEnd() > maxChars) capHeld();
        } else if (!closing) {
          const outer = open[open.length - 1];
          // No longer the innermost: cut what lies before the guess now, while its place is surest.
          if (outer && fromChar > 0 && !truncated) cutFront(outer, true);
          const ordinal = opened++;
          open.push({ text: "", dropped: 0, cutTail: 0, over: false, ordinal, start: known.get(ordinal) });
        } else close();
        return;
      case "w:t":
        if (!selfClosing) inText = !closing;
        return;
      case "w:r":
        if (!selfClosing) runDepth = Math.max(0, runDepth + (closing ? -1 : 1));
        return;
      case "w:tab":
        // Tab stops (<w:tabs><w:tab .../></w:tabs>) sit in paragraph properties, outside runs.
        if (runDepth > 0 && !closing) add("\t");
        return;
      case "w:br":
      case "w:cr":
        if (runDepth > 0 && !closing) add("\n");
        return;
      case "w:noBreakHyphen":
        if (runDepth > 0 && !closing) add("-");
        return;
    }
  };

  const r = await streamZipText(reader, {
    entry,
    onText: (buf, seen) => {
      let pos = 0;
      // Each pass consumes text up to a tag and the tag itself, or leaves the loop to await more.
      for (;;) {
        const lt = buf.indexOf("<", pos);
        if (lt < 0) break;
        if (inText && fallbackDepth === 0 && lt > pos) add(decodeEntities(buf.slice(pos, lt)));
        pos = lt;
        if (buf.startsWith("<!--", lt)) {
          const endComment = buf.indexOf("-->", lt + 4);
          if (endComment < 0) break;
          pos = endComment + 3;
          continue;
        }
        const gt = buf.indexOf(">", lt);
        if (gt < 0) break;
        onTag(buf.slice(lt + 1, gt));
        pos = gt + 1;
      }
      if (buf.length - pos > MAX_PENDING_CHARS)
        throw new AttachmentFormatError("bad_xml", "word/document.xml is not well-formed XML (an unterminated tag)");
      if (truncated && (fromChar > 0 || seen >= COUNT_LIMIT_BYTES)) {
        countedToEnd = false;
        return false;
      }
      return pos;
    },
  });
  close(); // an unclosed final paragraph still counts
  const result: DocxText = { text: out.join(""), paragraphs, truncated, peakHeldChars: peakHeld };
  if (!r.complete && !countedToEnd) result.approximate = true;
  return { result, misplaced };
}
