// XLSX rows without loading the workbook: the ZIP directory comes from ranged reads, the sheet is
// inflated as a stream and parsed a <row> at a time (stopping after the last row asked for), and
// only the shared strings those rows use are kept. A 100 MB sheet costs the rows read, not 100 MB.
import { AttachmentFormatError } from "../shared/errors";
import type { RangeReader } from "../shared/range-reader";
import { findZipEntry, listZip, readZipEntry, streamZipText, type ZipEntry } from "../shared/zip";

export type XlsxCell = string | number | boolean | null;

export interface XlsxSheetInfo {
  name: string;
  /** The last used row number (row 1 included). */
  rows: number;
  columns: number;
  /** Set when a sheet without a dimension was too large to scan to the end: a lower bound. */
  approximate?: boolean;
}

export interface XlsxRows {
  sheet: string;
  /** rows[i] is sheet row from + i; missing rows are empty arrays, missing cells null. */
  rows: XlsxCell[][];
  from: number;
  to: number;
  /** The request spanned more than maxRows rows, or its rows' text more than maxChars; `to` says where it stopped. */
  truncated: boolean;
  /** When the read went to the sheet's end: its last row with cells (0 for an empty sheet). */
  lastRow?: number;
}

const SMALL_PART_BYTES = 8 * 1024 * 1024;
// Counting rows of a sheet with no <dimension> means inflating it; past this, report a lower bound.
const SCAN_LIMIT_BYTES = 64 * 1024 * 1024;
// The sheet header (<sheetPr>, <dimension>, <sheetViews>, <cols>) precedes <sheetData>.
const HEADER_LIMIT_BYTES = 1024 * 1024;
const MAX_ELEMENT_CHARS = 16 * 1024 * 1024;
// A start tag whose attributes are read (a cell, a sheet, a relationship, the dimension): Excel's
// longest is under 200 characters.
const MAX_START_TAG_CHARS = 64 * 1024;
// The facts list this many sheets, names cut at SHEET_NAME_CHARS (Excel allows 31), so a workbook
// naming thousands of sheets (or one part under thousands of long names) stays a small stored row.
const LISTED_SHEETS = 100;
const SHEET_NAME_CHARS = 100;
const P = "(?:[\\w.-]+:)?"; // an optional namespace prefix (some writers emit <x:row>)
// The text a chunk may end in that could still begin a start tag: "<", a prefix and part of a name.
const PARTIAL_TAG = /^<[\w.:-]*$/;
const PARTIAL_TAG_CHARS = 256;

interface SheetRef {
  name: string;
  entry: ZipEntry;
}

interface Workbook {
  entries: ZipEntry[];
  sheets: SheetRef[];
  sharedStrings: ZipEntry | undefined;
}

const utf8 = (b: Uint8Array) => new TextDecoder("utf-8").decode(b);

export function decodeXmlText(s: string): string {
  if (!s.includes("&") && !s.includes("_x")) return s;
  return (
    s
      // Excel escapes control characters in strings as _xHHHH_.
      .replace(/_x([0-9A-Fa-f]{4})_/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (m, e: string) => {
        if (e[0] !== "#") return ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" } as Record<string, string>)[e];
        const code = e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      })
  );
}

/** A character of an attribute name as the attribute pattern reads one: [\w:.-]. */
function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 58) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || c === 45;
}

/** What a regexp's \s matches: white space and line terminators. */
function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * The attributes of a start tag (its text after the name), as /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g
 * finds them, read in one pass: that pattern retried every name at every letter of a long run with
 * no "=" (a start tag of 160,000 letters took 20 s). No tag a writer emits comes near the bound; a
 * longer one is refused like an element past MAX_ELEMENT_CHARS.
 */
export function tagAttributes(tag: string): Record<string, string> {
  if (tag.length > MAX_START_TAG_CHARS)
    throw new AttachmentFormatError("bad_xml", `a start tag is longer than ${MAX_START_TAG_CHARS} characters`);
  const out: Record<string, string> = {};
  // Where a quote of each kind is known to appear no more: a value opened with it never closes, and
  // is not looked for again to the end of the tag.
  const noQuoteFrom = { '"': Infinity, "'": Infinity };
  let i = 0;
  while (i < tag.length) {
    if (!isNameChar(tag.charCodeAt(i))) {
      i++;
      continue;
    }
    // A name that fails fails from each of its letters too: the next look starts after it.
    const nameStart = i;
    while (i < tag.length && isNameChar(tag.charCodeAt(i))) i++;
    let j = i;
    while (j < tag.length && isSpace(tag.charCodeAt(j))) j++;
    if (tag[j] !== "=") continue;
    j++;
    while (j < tag.length && isSpace(tag.charCodeAt(j))) j++;
    const quote = tag[j];
    if (quote !== '"' && quote !== "'") continue;
    const close = j + 1 >= noQuoteFrom[quote] ? -1 : tag.indexOf(quote, j + 1);
    if (close < 0) {
      noQuoteFrom[quote] = Math.min(noQuoteFrom[quote], j + 1);
      continue;
    }
    out[tag.slice(nameStart, i)] = decodeXmlText(tag.slice(j + 1, close));
    i = close + 1;
  }
  return out;
}

function resolvePart(baseDir: string, target: string): string {
  const raw = target.startsWith("/") ? target.slice(1) : baseDir ? `${baseDir}/${target}` : target;
  const parts: string[] = [];
  for (const seg of raw.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg && seg !== ".") parts.push(seg);
  }
  return parts.join("/");
}

const dirOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf("/")));

/**
 * findZipEntry over maps built once: a workbook may name a part for each of thousands of sheets,
 * and a search of the whole directory for each was sheets × entries.
 */
function entryFinder(entries: ZipEntry[]): (name: string) => ZipEntry | undefined {
  const exact = new Map<string, ZipEntry>();
  const folded = new Map<string, ZipEntry>();
  for (const e of entries) {
    if (!exact.has(e.name)) exact.set(e.name, e);
    const key = e.name.toLowerCase();
    if (!folded.has(key)) folded.set(key, e);
  }
  return (name) => {
    const n = name.replace(/^\/+/, "");
    return exact.get(n) ?? folded.get(n.toLowerCase());
  };
}

async function readRels(
  reader: RangeReader,
  entries: ZipEntry[],
  partPath: string,
): Promise<{ id: string; type: string; target: string }[]> {
  const relsPath = `${dirOf(partPath) ? `${dirOf(partPath)}/` : ""}_rels/${partPath.slice(partPath.lastIndexOf("/") + 1)}.rels`;
  const entry = findZipEntry(entries, relsPath);
  if (!entry) return [];
  const xml = utf8(await readZipEntry(reader, entry, { maxBytes: SMALL_PART_BYTES }));
  return [...xml.matchAll(new RegExp(`<${P}Relationship\\b([^>]*)>`, "g"))].map((m) => {
    const a = tagAttributes(m[1]);
    return { id: a.Id ?? "", type: a.Type ?? "", target: a.Target ?? "" };
  });
}

async function openWorkbook(reader: RangeReader): Promise<Workbook> {
  const entries = await listZip(reader);
  let wbPath = "xl/workbook.xml";
  if (!findZipEntry(entries, wbPath)) {
    // Not every writer uses the usual name; the package relationships name the main part.
    const main = (await readRels(reader, entries, "")).find((r) => r.type.endsWith("/officeDocument"));
    if (main) wbPath = resolvePart("", main.target);
  }
  const wbEntry = findZipEntry(entries, wbPath);
  if (!wbEntry) throw new AttachmentFormatError("missing_entry", "not an XLSX workbook: xl/workbook.xml is missing");
  const wbXml = utf8(await readZipEntry(reader, wbEntry, { maxBytes: SMALL_PART_BYTES }));
  if (!new RegExp(`<${P}workbook\\b`).test(wbXml))
    throw new AttachmentFormatError("missing_entry", `not an XLSX workbook: ${wbEntry.name} is not a workbook`);
  const rels = await readRels(reader, entries, wbEntry.name);
  // The first relationship of each id, as a search from the start finds it.
  const relById = new Map<string, { target: string }>();
  for (const r of rels) if (!relById.has(r.id)) relById.set(r.id, r);
  const find = entryFinder(entries);
  const base = dirOf(wbEntry.name);
  const sheets: SheetRef[] = [];
  for (const m of wbXml.matchAll(new RegExp(`<${P}sheet\\b([^>]*)>`, "g"))) {
    const a = tagAttributes(m[1]);
    const rid = Object.entries(a).find(([k]) => k === "id" || k.endsWith(":id"))?.[1];
    const rel = rid === undefined ? undefined : relById.get(rid);
    const entry = find(rel ? resolvePart(base, rel.target) : `${base}/worksheets/sheet${sheets.length + 1}.xml`);
    if (entry && a.name !== undefined) sheets.push({ name: a.name, entry });
  }
  const ssRel = rels.find((r) => r.type.endsWith("/sharedStrings"));
  const sharedStrings = findZipEntry(entries, ssRel ? resolvePart(base, ssRel.target) : `${base}/sharedStrings.xml`);
  return { entries, sheets, sharedStrings };
}

/**
 * Where a search of text (from `from`) for a start tag resumes when the next text comes: at a "<"
 * the text ends in that could still begin one ("<" and a name so far), else past its end.
 */
function resumeAt(text: string, from: number): number {
  const lt = text.lastIndexOf("<");
  return lt >= from && text.length - lt <= PARTIAL_TAG_CHARS && PARTIAL_TAG.test(text.slice(lt)) ? lt : text.length;
}

/**
 * Streams an entry as text, handing each complete element named `tag` (any prefix) to onElement.
 * Returning false stops. Stops (complete: false) after limitBytes of uncompressed text; `bytes`
 * is what was inflated.
 */
async function streamElements(
  reader: RangeReader,
  {
    entry,
    tag,
    onElement,
    limitBytes = Infinity,
  }: { entry: ZipEntry; tag: string; onElement: (xml: string) => boolean | undefined; limitBytes?: number },
): Promise<{ complete: boolean; bytes: number }> {
  const open = new RegExp(`<${P}${tag}(?=[\\s/>])`, "g");
  let stopped = false;
  // An element still open when a chunk ends is read again with the next chunk, but its start tag's
  // end and its closing tag are looked for only from where the last look stopped (offsets from the
  // element's start): an element of up to MAX_ELEMENT_CHARS costs its length, not length × chunks.
  let resumeGt = 0;
  let resumeClose = 0;
  const tooLarge = (chars: number) => {
    if (chars > MAX_ELEMENT_CHARS)
      throw new AttachmentFormatError(
        "bad_xml",
        `a <${tag}> element in ${entry.name} is larger than ${MAX_ELEMENT_CHARS} characters`,
      );
  };
  const r = await streamZipText(reader, {
    entry,
    onText: (buf, seen) => {
      let pos = 0;
      for (;;) {
        open.lastIndex = pos;
        const m = open.exec(buf);
        if (!m) {
          pos = resumeAt(buf, pos);
          break;
        }
        const gt = buf.indexOf(">", m.index + resumeGt);
        if (gt < 0) {
          pos = m.index;
          resumeGt = buf.length - m.index;
          tooLarge(buf.length - pos);
          break;
        }
        let end: number;
        if (buf[gt - 1] === "/") end = gt + 1;
        else {
          const close = `</${m[0].slice(1)}>`;
          const c = buf.indexOf(close, Math.max(gt, m.index + resumeClose));
          if (c < 0) {
            pos = m.index;
            resumeGt = gt - m.index;
            resumeClose = Math.max(0, buf.length - m.index - close.length + 1);
            tooLarge(buf.length - pos);
            break;
          }
          end = c + close.length;
        }
        resumeGt = 0;
        resumeClose = 0;
        pos = end;
        if (onElement(buf.slice(m.index, end)) === false) {
          stopped = true;
          return false;
        }
      }
      if (seen >= limitBytes) {
        stopped = true;
        return false;
      }
      return pos;
    },
  });
  return { complete: r.complete && !stopped, bytes: r.bytes };
}

/** Column number (A = 1) of a cell reference like "AB12". */
function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

function parseRef(ref: string): { row: number; col: number } | null {
  const m = /^\$?([A-Za-z]{1,3})\$?(\d+)$/.exec(ref.trim());
  return m ? { col: columnNumber(m[1]), row: Number(m[2]) } : null;
}

const ROW_NUMBER = /\sr\s*=\s*["'](\d+)["']/;

/**
 * An element pattern, read by `eachElement` without lazy regexps: `<c>` after `<c>` never closed
 * would otherwise each scan to the end of the text (quadratic in a row of up to MAX_ELEMENT_CHARS).
 * `open` finds `<name` (any prefix), `close` its closing tag (any prefix). `startTag` says what
 * may follow the name: "attrs" attributes to the first ">", a "/>" ending the element; "open"
 * the same, but "/>" does not end it; "strict" only whitespace and attributes, "/>" or ">";
 * "none" no start tag is read (the element runs from its name to the closing tag).
 */
interface ElementPattern {
  open: RegExp;
  close: RegExp;
  startTag: "attrs" | "open" | "strict" | "none";
}

const element = (name: string, startTag: ElementPattern["startTag"]): ElementPattern => ({
  open: new RegExp(`<${P}${name}\\b`, "g"),
  close: new RegExp(`<\\/${P}${name}>`, "g"),
  startTag,
});

// Were <c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>), <v(?:\s[^>]*?)?(?:\/>|>([\s\S]*?)<\/v>), the same
// for <t>, <rPh\b[\s\S]*?<\/rPh> and <is\b[^>]*>([\s\S]*?)<\/is>: eachElement matches the same.
const CELL = element("c", "attrs");
const VALUE = element("v", "strict");
const TEXT = element("t", "strict");
const PHONETIC = element("rPh", "none");
const INLINE = element("is", "open");

interface FoundElement {
  start: number;
  end: number;
  /** The start tag's text after the name (up to "/>" or ">"). */
  attrs: string;
  /** The content between the tags; undefined for an element closed by "/>". */
  inner: string | undefined;
}

/**
 * Each element of `pattern` in xml, left to right and not overlapping, as a global regexp with a
 * lazy body would find them, in time linear in xml: the closing tag is looked for from where the
 * last look stopped, never again from each opening tag. `onElement` returning false stops.
 */
function eachElement(
  xml: string,
  pattern: ElementPattern,
  onElement: (found: FoundElement) => boolean | undefined,
): void {
  const { open, close, startTag } = pattern;
  // The first closing tag at or after `closeFrom` (-1: none): valid for any later look before it.
  let closeFrom = -1;
  let closeAt = -1;
  let closeEnd = -1;
  const nextClose = (from: number): number => {
    if (closeFrom < 0 || from < closeFrom || (closeAt >= 0 && closeAt < from)) {
      close.lastIndex = from;
      const m = close.exec(xml);
      closeFrom = from;
      closeAt = m ? m.index : -1;
      closeEnd = m ? m.index + m[0].length : -1;
    }
    return closeAt;
  };
  let pos = 0;
  for (;;) {
    open.lastIndex = pos;
    const m = open.exec(xml);
    if (!m) return;
    const nameEnd = m.index + m[0].length;
    pos = m.index + 1; // where to look next if this one is no element
    let attrsEnd = nameEnd;
    let innerStart = nameEnd;
    let selfClosed = false;
    if (startTag !== "none") {
      const next = xml[nameEnd] ?? "";
      if (startTag === "strict" && !(next === ">" || xml.startsWith("/>", nameEnd) || /\s/.test(next))) continue;
      const gt = xml.indexOf(">", nameEnd);
      if (gt < 0) return; // no later element has a start tag either
      selfClosed = startTag !== "open" && gt - 1 >= nameEnd && xml[gt - 1] === "/";
      attrsEnd = selfClosed ? gt - 1 : gt;
      innerStart = gt + 1;
    }
    let end: number;
    let inner: string | undefined;
    if (selfClosed) end = attrsEnd + 2;
    else {
      const c = nextClose(innerStart);
      if (c < 0) continue;
      inner = xml.slice(innerStart, c);
      end = closeEnd;
    }
    pos = end;
    if (onElement({ start: m.index, end, attrs: xml.slice(nameEnd, attrsEnd), inner }) === false) return;
  }
}

/** The first element of `pattern` in xml, or undefined. */
function firstElement(xml: string, pattern: ElementPattern): FoundElement | undefined {
  let found: FoundElement | undefined;
  eachElement(xml, pattern, (f) => {
    found = f;
    return false;
  });
  return found;
}

/** The visible text of an <si> or <is>: every <t> run except phonetic guides. */
function richText(xml: string): string {
  let plain = "";
  let last = 0;
  eachElement(xml, PHONETIC, (f) => {
    plain += xml.slice(last, f.start);
    last = f.end;
    return undefined;
  });
  plain += xml.slice(last);
  let out = "";
  eachElement(plain, TEXT, (f) => {
    out += f.inner ?? "";
    return undefined;
  });
  return decodeXmlText(out);
}

type RawCell = { col: number; value: XlsxCell; sharedIndex?: number };
/** The characters a cell's own value shows as (a shared string's are counted once it is read). */
const valueLength = (c: RawCell) => (c.value === null ? 0 : String(c.value).length);
/** A sheet has at most 16,384 columns (XFD): cells past it are not a spreadsheet's, and are not read (a hostile row of millions of cells stays small). */
const MAX_COLUMNS = 16_384;
/** A sheet has at most 1,048,576 rows. */
const MAX_ROWS = 1_048_576;
/** A cell element in a row's text: a row without one holds nothing. */
const HAS_CELL = new RegExp(`<${P}c\\b`, "g");

/** Whether a row's content (after its start tag) holds a cell element; searched in place, not copied. */
function hasCell(rowXml: string): boolean {
  HAS_CELL.lastIndex = rowXml.indexOf(">") + 1;
  return HAS_CELL.test(rowXml);
}

function rowNumberOf(rowXml: string, previous: number): number {
  const startTag = rowXml.slice(0, rowXml.indexOf(">") + 1);
  const m = ROW_NUMBER.exec(startTag);
  return m ? Number(m[1]) : previous + 1;
}

/**
 * At most `keep` characters of s, as a string of its own. A slice of a long string points into it:
 * a value cut from its row's text would keep the whole row (megabytes) alive while the read runs.
 */
function ownText(s: string, keep: number): string {
  if (keep === Infinity) return s;
  const cut = s.length > keep ? s.slice(0, keep) : s;
  // Slicing a joined string makes V8 copy the join into a new string first: the slice points into
  // that copy, never into the row.
  return ` ${cut}`.slice(1);
}

/** How much of a row parseCells keeps. */
interface CellBounds {
  /** Each string value keeps at most this many characters (its own copy). */
  keep: number;
  /**
   * Cells stop after the first whose text, counted from the row's start (a tab for each column
   * before it and the values so far, a shared string as none yet), passes this: what follows is
   * past the cap the row is read for.
   */
  limit: number;
}

function parseCells(rowXml: string, { keep, limit }: CellBounds): RawCell[] {
  const body = rowXml.slice(rowXml.indexOf(">") + 1);
  const cells: RawCell[] = [];
  let col = 0;
  let chars = 0;
  const text = (s: string) => ownText(s, keep);
  eachElement(body, CELL, (found) => {
    const a = tagAttributes(found.attrs);
    const ref = a.r ? parseRef(a.r) : null;
    col = ref ? ref.col : col + 1;
    if (col > MAX_COLUMNS) return false;
    const inner = found.inner ?? "";
    const v = firstElement(inner, VALUE)?.inner;
    const t = a.t ?? "n";
    let cell: RawCell;
    if (t === "inlineStr") {
      const is = firstElement(inner, INLINE);
      cell = { col, value: is ? text(richText(is.inner ?? "")) : v !== undefined ? text(decodeXmlText(v)) : null };
    } else if (v === undefined) cell = { col, value: null };
    else if (t === "s") {
      // An index that is no string's is an empty cell, and never makes the read look for it.
      const index = Number(v);
      cell =
        Number.isSafeInteger(index) && index >= 0 ? { col, value: null, sharedIndex: index } : { col, value: null };
    } else if (t === "b") cell = { col, value: v.trim() === "1" || v.trim() === "true" };
    else if (t === "str" || t === "e" || t === "d") cell = { col, value: text(decodeXmlText(v)) };
    else {
      const n = Number(v);
      cell = { col, value: v.trim() !== "" && Number.isFinite(n) ? n : text(decodeXmlText(v)) };
    }
    cells.push(cell);
    if (cell.value !== null) chars += String(cell.value).length;
    return col - 1 + chars > limit ? false : undefined;
  });
  return cells;
}

function pickSheet(wb: Workbook, sheet: string | number): SheetRef {
  let found: SheetRef | undefined;
  if (typeof sheet === "number") found = Number.isInteger(sheet) ? wb.sheets[sheet - 1] : undefined;
  else
    found =
      wb.sheets.find((s) => s.name === sheet) ?? wb.sheets.find((s) => s.name.toLowerCase() === sheet.toLowerCase());
  if (!found) {
    const names = wb.sheets.map((s) => `"${s.name}"`).join(", ");
    throw new AttachmentFormatError(
      "sheet_not_found",
      `no sheet ${typeof sheet === "number" ? `number ${sheet}` : `"${sheet}"`} in this workbook (sheets: ${names || "none"})`,
    );
  }
  return found;
}

type SheetSize = Omit<XlsxSheetInfo, "name">;

const DIMENSION = new RegExp(`<${P}dimension\\b`, "g");
const SHEET_DATA = new RegExp(`<${P}sheetData\\b`, "g");

/**
 * The used range from <dimension>, read from the sheet's head only (to <sheetData>, at most
 * HEADER_LIMIT_BYTES). The head is consumed as it is searched, keeping only a start tag whose ">"
 * has not come yet or a "<" that may begin one, and each search resumes where it stopped: a head
 * of 1 MB costs 1 MB, not 1 MB for each chunk (nor each "<dimension" in it).
 */
async function dimensionOf(
  reader: RangeReader,
  entry: ZipEntry,
): Promise<{ size: { rows: number; columns: number } | null; bytes: number }> {
  let ref: string | undefined;
  // Offsets in the head: what was consumed, where each search resumes, and a <dimension> start
  // tag not yet ended (its start, and how far its ">" was looked for).
  let base = 0;
  let dimensionFrom = 0;
  let dataFrom = 0;
  let pending = -1;
  let gtFrom = 0;
  const r = await streamZipText(reader, {
    entry,
    onText: (text, seen) => {
      let pos = dimensionFrom - base;
      for (;;) {
        DIMENSION.lastIndex = pos;
        const m = DIMENSION.exec(text);
        if (!m) {
          pos = resumeAt(text, pos);
          break;
        }
        const nameEnd = m.index + m[0].length;
        const gt = text.indexOf(">", base + m.index === pending ? Math.max(nameEnd, gtFrom - base) : nameEnd);
        if (gt < 0) {
          pending = base + m.index;
          gtFrom = base + text.length;
          pos = m.index;
          break;
        }
        // A start tag past the bound is no writer's: passed over, as one without a ref is.
        const tag = text.slice(nameEnd, gt);
        const found = tag.length <= MAX_START_TAG_CHARS ? tagAttributes(tag).ref : undefined;
        if (found !== undefined) {
          ref = found;
          return false;
        }
        pos = gt + 1;
      }
      dimensionFrom = base + pos;
      SHEET_DATA.lastIndex = dataFrom - base;
      if (SHEET_DATA.test(text) || seen > HEADER_LIMIT_BYTES) return false;
      dataFrom = base + resumeAt(text, dataFrom - base);
      const used = Math.min(dimensionFrom, dataFrom) - base;
      base += used;
      return used;
    },
    // The <dimension> is in a sheet's first few hundred bytes: a small first read inflates little
    // (all of it counts against the workbook's budget, and a slice can inflate 1,000-fold).
    readBytes: 4 * 1024,
  });
  const none = { size: null, bytes: r.bytes };
  if (ref === undefined) return none;
  const parts = ref.split(":");
  const end = parseRef(parts[parts.length - 1]);
  // Some writers put "A1" in every sheet whatever it holds; that says nothing, so scan instead.
  if (!end || (parts.length === 1 && end.row === 1 && end.col === 1)) return none;
  // The whole grid (to row 1,048,576 or column XFD) is what a writer that did not measure claims,
  // and a row or column number past the part's byte count is more than it can plausibly hold
  // (scanning a part that small is cheap): either is counted by scanning instead.
  if (end.row >= MAX_ROWS || end.col >= MAX_COLUMNS) return none;
  if (end.row > entry.uncompressedSize || end.col > entry.uncompressedSize) return none;
  return { size: { rows: end.row, columns: end.col }, bytes: r.bytes };
}

async function scanSheet(
  reader: RangeReader,
  { entry, limitBytes }: { entry: ZipEntry; limitBytes: number },
): Promise<{ rows: number; columns: number; complete: boolean; bytes: number }> {
  let rows = 0;
  let columns = 0;
  let previous = 0;
  const r = await streamElements(reader, {
    entry,
    tag: "row",
    onElement: (xml) => {
      previous = rowNumberOf(xml, previous);
      // Only where the cells are counts: their values are not kept.
      const cells = parseCells(xml, { keep: 0, limit: Infinity });
      if (cells.length) {
        rows = Math.max(rows, previous);
        columns = Math.max(columns, cells[cells.length - 1].col);
      }
    },
    limitBytes,
  });
  return { rows, columns, complete: r.complete, bytes: r.bytes };
}

/** A sheet name as the facts keep it: at most SHEET_NAME_CHARS, never half a surrogate pair. */
function listedName(name: string): string {
  if (name.length <= SHEET_NAME_CHARS) return name;
  const c = name.charCodeAt(SHEET_NAME_CHARS - 1);
  return name.slice(0, c >= 0xd800 && c <= 0xdbff ? SHEET_NAME_CHARS - 1 : SHEET_NAME_CHARS);
}

/**
 * The workbook's first LISTED_SHEETS sheets in order with their row and column counts (names cut
 * at SHEET_NAME_CHARS); `leftOut` counts the sheets after them. A part several sheets name is read
 * once, and the whole workbook inflates about SCAN_LIMIT_BYTES at most, however many sheets or
 * parts it names: a sheet measured past that is a lower bound (approximate).
 */
export async function xlsxInfo(reader: RangeReader): Promise<{ sheets: XlsxSheetInfo[]; leftOut: number }> {
  const wb = await openWorkbook(reader);
  let budget = SCAN_LIMIT_BYTES;
  const unmeasured: SheetSize = { rows: 0, columns: 0, approximate: true };
  const measure = async (entry: ZipEntry): Promise<SheetSize> => {
    if (budget <= 0) return unmeasured;
    const dim = await dimensionOf(reader, entry);
    budget -= dim.bytes;
    if (dim.size) return dim.size;
    if (budget <= 0) return unmeasured;
    const scan = await scanSheet(reader, { entry, limitBytes: budget });
    budget -= scan.bytes;
    const size = { rows: scan.rows, columns: scan.columns };
    return scan.complete ? size : { ...size, approximate: true };
  };
  const sizes = new Map<ZipEntry, SheetSize>();
  const sheets: XlsxSheetInfo[] = [];
  for (const s of wb.sheets.slice(0, LISTED_SHEETS)) {
    let size = sizes.get(s.entry);
    if (!size) {
      size = await measure(s.entry);
      sizes.set(s.entry, size);
    }
    sheets.push({ name: listedName(s.name), ...size });
  }
  return { sheets, leftOut: wb.sheets.length - sheets.length };
}

/** The shared strings a read asked for: their values, cut, and their lengths. */
interface SharedStrings {
  /** The strings kept, each cut at `keep` characters. */
  strings: Map<number, string>;
  /** Each string's length, counted to `keep` at most. */
  lengths: Map<number, number>;
}

/**
 * Only the shared strings the requested rows use, read in one pass that stops at the last one.
 * `wanted` maps each string to where it is first used (the order its cells' text is laid out in).
 * Each is kept cut at `keep` characters (its own copy), and while those kept pass `budget`
 * characters, the one first used latest is let go (only its length stays), as is any later one
 * first used after it. A row's text is at least the strings it uses: when the budget is at least
 * the text a read can show and one string more, every string used before the read's cap is kept,
 * and the pass ends once those are read.
 */
async function sharedStrings(
  reader: RangeReader,
  entry: ZipEntry | undefined,
  { wanted, keep, budget }: { wanted: Map<number, number>; keep: number; budget: number },
): Promise<SharedStrings> {
  const out: SharedStrings = { strings: new Map(), lengths: new Map() };
  if (wanted.size === 0) return out;
  if (!entry)
    throw new AttachmentFormatError("missing_entry", "the workbook uses shared strings but has no sharedStrings part");
  // The last string to read while every first use up to p is wanted: the pass stops after it.
  const lastFor = new Float64Array(wanted.size);
  for (const [index, at] of wanted) lastFor[at] = index;
  for (let p = 1; p < lastFor.length; p++) lastFor[p] = Math.max(lastFor[p], lastFor[p - 1]);
  // The string kept for each first use (-1: none); those from `cutoff` on are let go.
  const keptAt = new Float64Array(wanted.size).fill(-1);
  let cutoff = wanted.size;
  let kept = 0;
  let i = 0;
  await streamElements(reader, {
    entry,
    tag: "si",
    onElement: (xml) => {
      const at = wanted.get(i);
      if (at !== undefined) {
        const text = richText(xml);
        const length = Math.min(text.length, keep);
        out.lengths.set(i, length);
        if (at < cutoff) {
          out.strings.set(i, ownText(text, keep));
          keptAt[at] = i;
          kept += length;
        }
        while (kept > budget) {
          cutoff--;
          const gone = keptAt[cutoff];
          if (gone < 0) continue;
          out.strings.delete(gone);
          kept -= out.lengths.get(gone) ?? 0;
        }
      }
      i++;
      // Once the strings up to the cutoff are read, the text they make is past the cap there: no
      // string first used after it can be shown, nor move where the read stops.
      if (i > lastFor[Math.min(cutoff, wanted.size - 1)]) return false;
    },
  });
  return out;
}

/** How long a cell's value is, once its shared string (if any) is known. */
type LengthOf = (cell: RawCell) => number;

/**
 * The length of a row as its cells joined by tabs, padded to `width` (width - 1 tabs), counted no
 * further than past `limit`: what the row costs before its array is built.
 */
function rowChars(
  cells: RawCell[],
  { width, lengthOf, limit }: { width: number; lengthOf: LengthOf; limit: number },
): number {
  if (cells.length === 0) return 0;
  let n = width - 1;
  for (const c of cells) {
    if (c.col < 1 || c.col > width) continue;
    n += lengthOf(c);
    if (n > limit) break;
  }
  return n;
}

/**
 * A row's cells up to the first whose text from the row's start (a tab per column before it, and
 * the values so far) passes `limit`: a reader cuts the row there, so what follows is never shown.
 */
function cellsWithin(cells: RawCell[], { lengthOf, limit }: { lengthOf: LengthOf; limit: number }): RawCell[] {
  let n = 0;
  for (let i = 0; i < cells.length; i++) {
    n += lengthOf(cells[i]);
    if (cells[i].col - 1 + n > limit) return cells.slice(0, i + 1);
  }
  return cells;
}

/**
 * Rows from..to (sheet row numbers, 1-based, inclusive) of a sheet given by name or by 1-based
 * position. At most maxRows (default 5,000) rows per call; with maxChars, rows stop before the one
 * that would take their text (cells joined by tabs, rows by newlines) past it, the first row always
 * kept: a wide or long row is weighed before its array is built.
 *
 * With maxChars the read holds about that much text, whatever the rows hold: each value keeps at
 * most maxChars + 1 characters (enough to tell a row is cut), the sheet is read no further than the
 * row whose text passes maxChars (rows come in order, as the format requires), and a first row
 * longer than that has its cells after that point left empty (null): a reader cuts it there.
 */
export async function readXlsxRows(
  reader: RangeReader,
  {
    sheet,
    from,
    to,
    maxRows: rowCap,
    maxChars = Infinity,
  }: { sheet: string | number; from: number; to: number; maxRows?: number; maxChars?: number },
): Promise<XlsxRows> {
  const maxRows = Math.max(1, rowCap ?? 5000);
  const wb = await openWorkbook(reader);
  const ref = pickSheet(wb, sheet);
  const first = Math.max(1, Math.floor(from));
  const requested = Math.floor(to);
  const last = Math.min(requested, first + maxRows - 1);
  if (last < first) return { sheet: ref.name, rows: [], from: first, to: first - 1, truncated: false };

  const keep = maxChars + 1;
  // Each row read, with what its text is known to cost at least (shared strings not counted yet).
  const got = new Map<number, { cells: RawCell[]; chars: number }>();
  // Those rows' least cost, and the highest row number read: once their text (with a newline
  // between rows) is past maxChars, no later row can be shown, and the reading stops.
  let counted = 0;
  let highest = first;
  let previous = 0;
  let reachedEnd = true;
  let lastUsed = 0;
  await streamElements(reader, {
    entry: ref.entry,
    tag: "row",
    onElement: (xml) => {
      previous = rowNumberOf(xml, previous);
      if (previous > last) {
        reachedEnd = false;
        return false;
      }
      if (previous > lastUsed && hasCell(xml)) lastUsed = previous;
      if (previous < first) return undefined;
      counted -= got.get(previous)?.chars ?? 0;
      // The row's text starts after a newline for each row before it and (rows in order) their text.
      const before = previous - first + (previous >= highest ? counted : 0);
      highest = Math.max(highest, previous);
      const cells = parseCells(xml, { keep, limit: maxChars - before });
      const chars = cells.length ? cells[cells.length - 1].col - 1 + cells.reduce((n, c) => n + valueLength(c), 0) : 0;
      got.set(previous, { cells, chars });
      counted += chars;
      if (highest - first + counted > maxChars) {
        reachedEnd = false;
        return false;
      }
    },
  });

  // Each string the rows use, with where it is first used as their text is laid out.
  const wanted = new Map<number, number>();
  for (const r of [...got.keys()].sort((a, b) => a - b))
    for (const c of got.get(r)?.cells ?? [])
      if (c.sharedIndex !== undefined && !wanted.has(c.sharedIndex)) wanted.set(c.sharedIndex, wanted.size);
  // What a read shows is at most maxChars, and its last value at most `keep`: within twice `keep`.
  const shared = await sharedStrings(reader, wb.sharedStrings, { wanted, keep, budget: 2 * keep });
  const lengthOf: LengthOf = (c) =>
    c.sharedIndex !== undefined ? (shared.lengths.get(c.sharedIndex) ?? 0) : valueLength(c);

  // A sheet that ends before `last` returns up to its last row; one that goes on returns the range.
  const end = reachedEnd ? Math.min(last, Math.max(first - 1, ...got.keys())) : last;
  let width = 0;
  for (const { cells } of got.values()) if (cells.length) width = Math.max(width, cells[cells.length - 1].col);
  const shown: RawCell[][] = [];
  let used = 0;
  let capped = false;
  for (let r = first; r <= end; r++) {
    const cells = got.get(r)?.cells ?? [];
    const cost = (r > first ? 1 : 0) + rowChars(cells, { width, lengthOf, limit: maxChars - used });
    if (r > first && used + cost > maxChars) {
      capped = true;
      break;
    }
    used += cost;
    shown.push(cost > maxChars ? cellsWithin(cells, { lengthOf, limit: maxChars }) : cells);
  }

  const rows = shown.map((cells): XlsxCell[] => {
    if (cells.length === 0) return [];
    const row: XlsxCell[] = new Array(width).fill(null);
    for (const c of cells) {
      if (c.col < 1 || c.col > width) continue;
      row[c.col - 1] = c.sharedIndex !== undefined ? (shared.strings.get(c.sharedIndex) ?? null) : c.value;
    }
    return row;
  });
  return {
    sheet: ref.name,
    rows,
    from: first,
    to: first + rows.length - 1,
    truncated: capped || (requested > last && !reachedEnd),
    ...(reachedEnd ? { lastRow: lastUsed } : {}),
  };
}
