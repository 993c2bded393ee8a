// CSV/TSV rows straight from the line index: a row is a line, so row N is one checkpoint jump away
// however large the file is.
//
// LIMITATION: a quoted field that contains a newline is not joined with the next line; each line
// is parsed on its own (an unterminated quote takes the rest of its line). Row numbers therefore
// count lines, which is what the index can address without reading the whole file.
import { lineEndByte, readLines, type LineIndex } from "../text/line-index";
import type { RangeReader } from "../shared/range-reader";

const TAIL_BYTES = 4096;

/** Splits one line into fields, RFC 4180 quoting: "a,b" keeps its comma, "" is a literal quote. */
export function parseDelimitedLine(line: string, delimiter: string): string[] {
  if (!delimiter) throw new RangeError("delimiter must not be empty");
  const out: string[] = [];
  const n = line.length;
  let i = 0;
  // Every pass consumes at least the delimiter or ends the line, so this terminates.
  for (;;) {
    if (line[i] === '"') {
      let value = "";
      i++;
      while (i < n) {
        const q = line.indexOf('"', i);
        if (q === -1) {
          value += line.slice(i);
          i = n;
          break;
        }
        value += line.slice(i, q);
        if (line[q + 1] === '"') {
          value += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      // Leniency: anything between the closing quote and the delimiter is kept, not dropped.
      const d = line.indexOf(delimiter, i);
      value += line.slice(i, d === -1 ? n : d);
      out.push(value);
      if (d === -1) break;
      i = d + delimiter.length;
    } else {
      const d = line.indexOf(delimiter, i);
      if (d === -1) {
        out.push(line.slice(i));
        break;
      }
      out.push(line.slice(i, d));
      i = d + delimiter.length;
    }
  }
  return out;
}

// Empty lines at the very end (an editor's extra newline) are not rows.
async function trailingEmptyLines(reader: RangeReader, index: LineIndex): Promise<number> {
  const start = Math.max(0, reader.size - TAIL_BYTES);
  const tail = await reader.read(start, reader.size - start);
  const eol = lineEndByte(index);
  let end = tail.length;
  const dropNewline = () => {
    if (end > 0 && tail[end - 1] === eol) {
      end--;
      // CRLF: the CR before an LF belongs to the line end (a CR-only file has no LF to pair).
      if (eol === 0x0a && end > 0 && tail[end - 1] === 0x0d) end--;
      return true;
    }
    return false;
  };
  dropNewline(); // the last line's own terminator
  let count = 0;
  while (dropNewline()) count++;
  return count;
}

async function dataRows(reader: RangeReader, index: LineIndex): Promise<number> {
  if (index.lines <= 1) return 0;
  return Math.max(0, index.lines - 1 - (await trailingEmptyLines(reader, index)));
}

async function header(reader: RangeReader, index: LineIndex, delimiter: string): Promise<string[]> {
  if (index.lines === 0) return [];
  const r = await readLines(reader, { index, from: 1, to: 1, maxBytes: 64 * 1024 });
  return r.lines.length ? parseDelimitedLine(r.lines[0], delimiter) : [];
}

/** The header's column names and the number of data rows (lines after the header). */
export async function delimitedInfo(
  reader: RangeReader,
  index: LineIndex,
  delimiter: string,
): Promise<{ columns: string[]; rows: number }> {
  return { columns: await header(reader, index, delimiter), rows: await dataRows(reader, index) };
}

export interface DelimitedRows {
  header: string[];
  rows: string[][];
  /** Data rows returned (1 = the first row after the header); to = from - 1 when none. */
  from: number;
  to: number;
  totalRows: number;
  /** The text was cut at maxBytes before row `to` of the request. */
  truncated: boolean;
  /** When the cut fell inside row `to`: the bytes of its line given so far (file_read's `offset` for the rest). */
  cutAtByte?: number;
}

/** Data rows from..to (1-based, inclusive, the header not counted), clamped to the file. */
export async function readRows(
  reader: RangeReader,
  {
    index,
    delimiter,
    from,
    to,
    maxBytes,
  }: { index: LineIndex; delimiter: string; from: number; to: number; maxBytes?: number },
): Promise<DelimitedRows> {
  const [head, totalRows] = [await header(reader, index, delimiter), await dataRows(reader, index)];
  const first = Math.max(1, Math.floor(from));
  const last = Math.min(totalRows, Math.floor(to));
  if (last < first) return { header: head, rows: [], from: first, to: first - 1, totalRows, truncated: false };
  const r = await readLines(reader, { index, from: first + 1, to: last + 1, maxBytes });
  return {
    header: head,
    rows: r.lines.map((l) => parseDelimitedLine(l, delimiter)),
    from: first,
    to: first + r.lines.length - 1,
    totalRows,
    truncated: r.truncated,
    ...(r.cutAtByte !== undefined ? { cutAtByte: r.cutAtByte } : {}),
  };
}
