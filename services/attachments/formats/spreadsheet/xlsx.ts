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

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) out[m[1]] = decodeXmlText(m[2] ?? m[3]);
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
    const a = attrs(m[1]);
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
  const base = dirOf(wbEntry.name);
  const sheets: SheetRef[] = [];
  for (const m of wbXml.matchAll(new RegExp(`<${P}sheet\\b([^>]*)>`, "g"))) {
    const a = attrs(m[1]);
    const rid = Object.entries(a).find(([k]) => k === "id" || k.endsWith(":id"))?.[1];
    const rel = rels.find((r) => r.id === rid);
    const entry = findZipEntry(
      entries,
      rel ? resolvePart(base, rel.target) : `${base}/worksheets/sheet${sheets.length + 1}.xml`,
    );
    if (entry && a.name !== undefined) sheets.push({ name: a.name, entry });
  }
  const ssRel = rels.find((r) => r.type.endsWith("/sharedStrings"));
  const sharedStrings = findZipEntry(entries, ssRel ? resolvePart(base, ssRel.target) : `${base}/sharedStrings.xml`);
  return { entries, sheets, sharedStrings };
}

/**
 * Streams an entry as text, handing each complete element named `tag` (any prefix) to onElement.
 * Returning false stops. Stops (complete: false) after limitBytes of uncompressed text.
 */
async function streamElements(
  reader: RangeReader,
  {
    entry,
    tag,
    onElement,
    limitBytes = Infinity,
  }: { entry: ZipEntry; tag: string; onElement: (xml: string) => boolean | undefined; limitBytes?: number },
): Promise<{ complete: boolean }> {
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
          // Keep only what could still become the next element's start tag: "<" and a name so far.
          const lt = buf.lastIndexOf("<");
          pos = lt >= pos && buf.length - lt <= PARTIAL_TAG_CHARS && PARTIAL_TAG.test(buf.slice(lt)) ? lt : buf.length;
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
  return { complete: r.complete && !stopped };
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

function parseCells(rowXml: string): RawCell[] {
  const body = rowXml.slice(rowXml.indexOf(">") + 1);
  const cells: RawCell[] = [];
  let col = 0;
  eachElement(body, CELL, (found) => {
    const a = attrs(found.attrs);
    const ref = a.r ? parseRef(a.r) : null;
    col = ref ? ref.col : col + 1;
    if (col > MAX_COLUMNS) return false;
    const inner = found.inner ?? "";
    const v = firstElement(inner, VALUE)?.inner;
    const t = a.t ?? "n";
    if (t === "inlineStr") {
      const is = firstElement(inner, INLINE);
      cells.push({ col, value: is ? richText(is.inner ?? "") : v !== undefined ? decodeXmlText(v) : null });
    } else if (v === undefined) cells.push({ col, value: null });
    else if (t === "s") cells.push({ col, value: null, sharedIndex: Number(v) });
    else if (t === "b") cells.push({ col, value: v.trim() === "1" || v.trim() === "true" });
    else if (t === "str" || t === "e" || t === "d") cells.push({ col, value: decodeXmlText(v) });
    else {
      const n = Number(v);
      cells.push({ col, value: v.trim() !== "" && Number.isFinite(n) ? n : decodeXmlText(v) });
    }
    return undefined;
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

const DIMENSION = new RegExp(`<${P}dimension\\b[^>]*\\sref\\s*=\\s*["']([^"']*)["']`);
const SHEET_DATA = new RegExp(`<${P}sheetData\\b`);

/** The used range from <dimension>, read from the sheet's first bytes only. */
async function dimensionOf(reader: RangeReader, entry: ZipEntry): Promise<{ rows: number; columns: number } | null> {
  const found: { ref?: string } = {};
  await streamZipText(reader, {
    entry,
    // Consumes nothing, so each call sees the whole head read so far.
    onText: (head) => {
      const m = DIMENSION.exec(head);
      if (m) {
        found.ref = m[1];
        return false;
      }
      if (SHEET_DATA.test(head) || head.length > HEADER_LIMIT_BYTES) return false;
      return 0;
    },
    readBytes: 16 * 1024,
  });
  if (found.ref === undefined) return null;
  const parts = found.ref.split(":");
  const end = parseRef(parts[parts.length - 1]);
  // Some writers put "A1" in every sheet whatever it holds; that says nothing, so scan instead.
  if (!end || (parts.length === 1 && end.row === 1 && end.col === 1)) return null;
  // The whole grid (to row 1,048,576 or column XFD) is what a writer that did not measure claims,
  // and a row or column number past the part's byte count is more than it can plausibly hold
  // (scanning a part that small is cheap): either is counted by scanning instead.
  if (end.row >= MAX_ROWS || end.col >= MAX_COLUMNS) return null;
  if (end.row > entry.uncompressedSize || end.col > entry.uncompressedSize) return null;
  return { rows: end.row, columns: end.col };
}

async function scanSheet(
  reader: RangeReader,
  entry: ZipEntry,
): Promise<{ rows: number; columns: number; complete: boolean }> {
  let rows = 0;
  let columns = 0;
  let previous = 0;
  const r = await streamElements(reader, {
    entry,
    tag: "row",
    onElement: (xml) => {
      previous = rowNumberOf(xml, previous);
      const cells = parseCells(xml);
      if (cells.length) {
        rows = Math.max(rows, previous);
        columns = Math.max(columns, cells[cells.length - 1].col);
      }
    },
    limitBytes: SCAN_LIMIT_BYTES,
  });
  return { rows, columns, complete: r.complete };
}

/** Sheet names in workbook order with their row and column counts. */
export async function xlsxInfo(reader: RangeReader): Promise<{ sheets: XlsxSheetInfo[] }> {
  const wb = await openWorkbook(reader);
  const sheets: XlsxSheetInfo[] = [];
  for (const s of wb.sheets) {
    const dim = await dimensionOf(reader, s.entry);
    if (dim) sheets.push({ name: s.name, ...dim });
    else {
      const scan = await scanSheet(reader, s.entry);
      sheets.push(
        scan.complete
          ? { name: s.name, rows: scan.rows, columns: scan.columns }
          : { name: s.name, rows: scan.rows, columns: scan.columns, approximate: true },
      );
    }
  }
  return { sheets };
}

/** Only the shared strings the requested rows use, read in one pass that stops at the last one. */
async function sharedStrings(
  reader: RangeReader,
  entry: ZipEntry | undefined,
  wanted: Set<number>,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (wanted.size === 0) return out;
  if (!entry)
    throw new AttachmentFormatError("missing_entry", "the workbook uses shared strings but has no sharedStrings part");
  let max = 0;
  for (const w of wanted) max = Math.max(max, w);
  let i = 0;
  await streamElements(reader, {
    entry,
    tag: "si",
    onElement: (xml) => {
      if (wanted.has(i)) out.set(i, richText(xml));
      i++;
      if (i > max) return false;
    },
  });
  return out;
}

/**
 * The length of a row as its cells joined by tabs, padded to `width` (width - 1 tabs), counted no
 * further than past `limit`: what the row costs before its array is built.
 */
function rowChars(
  cells: RawCell[],
  { width, strings, limit }: { width: number; strings: Map<number, string>; limit: number },
): number {
  if (cells.length === 0) return 0;
  let n = width - 1;
  for (const c of cells) {
    if (c.col < 1 || c.col > width) continue;
    const v = c.sharedIndex !== undefined ? (strings.get(c.sharedIndex) ?? null) : c.value;
    if (v !== null) n += String(v).length;
    if (n > limit) break;
  }
  return n;
}

/**
 * Rows from..to (sheet row numbers, 1-based, inclusive) of a sheet given by name or by 1-based
 * position. At most maxRows (default 5,000) rows per call; with maxChars, rows stop before the one
 * that would take their text (cells joined by tabs, rows by newlines) past it, the first row always
 * kept: a wide or long row is weighed before its array is built.
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

  const got = new Map<number, RawCell[]>();
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
      if (previous >= first) got.set(previous, parseCells(xml));
      if (previous > lastUsed && hasCell(xml)) lastUsed = previous;
    },
  });

  const wanted = new Set<number>();
  for (const cells of got.values()) for (const c of cells) if (c.sharedIndex !== undefined) wanted.add(c.sharedIndex);
  const strings = await sharedStrings(reader, wb.sharedStrings, wanted);

  // A sheet that ends before `last` returns up to its last row; one that goes on returns the range.
  const end = reachedEnd ? Math.min(last, Math.max(first - 1, ...got.keys())) : last;
  let width = 0;
  for (const cells of got.values()) if (cells.length) width = Math.max(width, cells[cells.length - 1].col);
  const rows: XlsxCell[][] = [];
  let used = 0;
  let capped = false;
  for (let r = first; r <= end; r++) {
    const cells = got.get(r);
    const cost = (r > first ? 1 : 0) + rowChars(cells ?? [], { width, strings, limit: maxChars - used });
    if (r > first && used + cost > maxChars) {
      capped = true;
      break;
    }
    used += cost;
    if (!cells || cells.length === 0) {
      rows.push([]);
      continue;
    }
    const row: XlsxCell[] = new Array(width).fill(null);
    for (const c of cells) {
      if (c.col < 1 || c.col > width) continue;
      row[c.col - 1] = c.sharedIndex !== undefined ? (strings.get(c.sharedIndex) ?? null) : c.value;
    }
    rows.push(row);
  }
  return {
    sheet: ref.name,
    rows,
    from: first,
    to: first + rows.length - 1,
    truncated: capped || (requested > last && !reachedEnd),
    ...(reachedEnd ? { lastRow: lastUsed } : {}),
  };
}
