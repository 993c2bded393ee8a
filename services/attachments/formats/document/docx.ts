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
}

// Past this much XML after the text cap, counting paragraphs stops.
const COUNT_LIMIT_BYTES = 64 * 1024 * 1024;
// Text kept before fromChar: what a text box ending inside a paragraph may shift the page by.
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
  const out: string[] = [];
  let outChars = 0;
  let truncated = false;
  let paragraphs = 0;
  // Paragraphs nest (a text box inside a run holds its own); each level builds its own line.
  const stack: { text: string; dropped: number }[] = [];
  let current: string | null = null;
  // Chars cut from the front of `current`, all before fromChar: a page deep in a long paragraph
  // holds the page, not the paragraph up to it.
  let dropped = 0;
  let inText = false;
  let runDepth = 0;
  // mc:Fallback repeats an mc:Choice's content for old readers; reading both would double it.
  let fallbackDepth = 0;
  let countedToEnd = true;

  // A paragraph's text is kept only up to what the cap still takes (one piece past it, so the
  // cap is seen): a hostile paragraph of millions of runs stays small. Before fromChar, what lies
  // more than DROP_MARGIN before it is cut off as it comes (in pieces of at least DROP_MARGIN, so
  // the cutting stays linear). The margin covers a text box that ends inside the paragraph and,
  // being written out first, moves the paragraph's text later.
  const add = (s: string) => {
    if (current === null || truncated || dropped + current.length > maxChars - outChars) return;
    current += s;
    if (fromChar === 0 || current.length < 2 * DROP_MARGIN) return;
    const at = outChars + (paragraphs > 0 ? 1 : 0) + dropped;
    const cut = Math.min(current.length, fromChar - DROP_MARGIN - at);
    if (cut >= DROP_MARGIN) {
      current = current.slice(cut);
      dropped += cut;
    }
  };
  /** A paragraph's line (`text`, after `cut` chars not kept) goes out: the part from fromChar up to the cap is kept. */
  const endParagraph = (text: string, cut = 0) => {
    paragraphs++;
    if (truncated) return;
    const sep = paragraphs > 1 ? "\n" : "";
    const at = outChars;
    const length = sep.length + cut + text.length;
    const end = Math.min(at + length, maxChars);
    const lo = Math.max(at, fromChar);
    if (end > lo) {
      const textAt = at + sep.length + cut;
      const from = Math.max(lo, textAt);
      out.push((lo < at + sep.length ? sep : "") + (end > from ? text.slice(from - textAt, end - textAt) : ""));
    }
    if (at + length > maxChars) {
      outChars = maxChars;
      truncated = true;
      return;
    }
    outChars += length;
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
        if (selfClosing) endParagraph("");
        else if (!closing) {
          if (current !== null) stack.push({ text: current, dropped });
          current = "";
          dropped = 0;
        } else if (current !== null || stack.length) {
          endParagraph(current ?? "", dropped);
          const outer = stack.pop();
          current = outer ? outer.text : null;
          dropped = outer ? outer.dropped : 0;
        }
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
  if (current !== null) endParagraph(current, dropped); // an unclosed final paragraph still counts
  const result: DocxText = { text: out.join(""), paragraphs, truncated };
  if (!r.complete && !countedToEnd) result.approximate = true;
  return result;
}
