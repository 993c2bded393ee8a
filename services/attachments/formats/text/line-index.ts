// A sparse line index lets a tool read lines 199,990–199,992 of a huge text file with one jump and
// a few kilobytes of reading, instead of streaming everything before them. The index is built once
// while the upload streams past, stores one byte offset per `every` lines, and is small enough to
// keep as JSON next to the file.
import { concatBytes } from "../shared/bytes";
import type { RangeReader } from "../shared/range-reader";
import { type TextEncoding, utf16Of } from "./encoding";

export interface LineIndex {
  /** Lines in the file; a final line without a newline counts, a trailing newline adds none. */
  lines: number;
  bytes: number;
  every: number;
  /** offsets[k] is the byte offset where line 1 + k*every starts. */
  offsets: number[];
  /**
   * [line, byte offset] of each line start at least `markBytes` past the checkpoint before it (an
   * `offsets` one or a mark): a line after a huge one is a jump away, and any line start that is no
   * checkpoint lies within `markBytes` of the one before it.
   */
  marks?: [number, number][];
  markBytes?: number;
  /**
   * The file's own encoding when it is not UTF-8: lines, bytes and offsets are then those of its
   * UTF-8 copy (r2-layout attachmentTextKey), which the line readers read instead of the blob.
   */
  encoding?: Exclude<TextEncoding, "utf-8">;
  /** Built since encodings were told apart (2026-12-05): an index without it is built again once. */
  encodingChecked?: true;
  /** LINE_INDEX_VERSION when stored: an index of an older version (no `marks`) is built again once. */
  version?: number;
  /**
   * "cr" when lines end in a lone CR (classic Mac OS text, Excel for Mac's "CSV (Macintosh)");
   * absent, they end in LF, a CR before it dropped (CRLF). An index stored before this was
   * recorded has none and reads as LF, as it was built.
   */
  lineEnd?: "cr";
}

/** 2: byte-based checkpoints (`marks`, 2026-12). */
export const LINE_INDEX_VERSION = 2;
const MARK_BYTES = 1024 * 1024;
const NL = 0x0a;
const CR = 0x0d;
// How far past the first CR the indexer looks for an LF before it takes CR as the line end: a
// CRLF file has one right after, and a lone CR in an LF file (a progress line redrawn in a log)
// has one soon after; a CR-only file has none.
const LINE_END_WINDOW = 64 * 1024;

/** The byte that ends a line in a file of this index. */
export const lineEndByte = (index: Pick<LineIndex, "lineEnd">): number => (index.lineEnd === "cr" ? CR : NL);

export class LineIndexer {
  private readonly every: number;
  private readonly markBytes: number;
  private newlines = 0;
  private bytes = 0;
  private lastByte = -1;
  private lastCheckpoint = 0;
  private readonly offsets: number[] = [0];
  private readonly marks: [number, number][] = [];
  /** The line-end byte once known; until then the bytes from the first CR are held back. */
  private eol: number | undefined;
  private held: Uint8Array[] = [];
  private heldBytes = 0;

  constructor(every = 1000, { markBytes = MARK_BYTES }: { markBytes?: number } = {}) {
    if (!Number.isInteger(every) || every < 1) throw new RangeError("every must be a positive integer");
    if (!Number.isInteger(markBytes) || markBytes < 1) throw new RangeError("markBytes must be a positive integer");
    this.every = every;
    this.markBytes = markBytes;
  }

  push(chunk: Uint8Array): void {
    if (this.eol === undefined) this.pushUndecided(chunk);
    else this.scan(chunk);
  }

  // The line end is LF if one comes before any CR or within LINE_END_WINDOW bytes of the first CR
  // (CRLF, or stray CRs in LF text), else CR. Bytes before the first CR or LF end no line; those
  // from it on are held (at most the window and a chunk) until the line end is decided.
  private pushUndecided(chunk: Uint8Array): void {
    let rest = chunk;
    if (this.heldBytes === 0) {
      const nl = chunk.indexOf(NL);
      const cr = chunk.indexOf(CR);
      if (nl !== -1 && (cr === -1 || nl < cr)) this.eol = NL;
      if (this.eol !== undefined || cr === -1) {
        this.scan(chunk);
        return;
      }
      this.scan(chunk.subarray(0, cr));
      rest = chunk.subarray(cr);
    }
    const nl = rest.subarray(0, LINE_END_WINDOW - this.heldBytes).indexOf(NL);
    // Copied: the caller may reuse the chunk's buffer.
    this.held.push(rest.slice());
    this.heldBytes += rest.length;
    if (nl !== -1) this.decide(NL);
    else if (this.heldBytes >= LINE_END_WINDOW) this.decide(CR);
  }

  private decide(eol: number): void {
    this.eol = eol;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const c of held) this.scan(c);
  }

  private scan(chunk: Uint8Array): void {
    const eol = this.eol ?? NL;
    for (let i = chunk.indexOf(eol); i !== -1; i = chunk.indexOf(eol, i + 1)) {
      this.newlines++;
      const start = this.bytes + i + 1;
      if (this.newlines % this.every === 0) this.offsets.push(start);
      else if (start - this.lastCheckpoint >= this.markBytes) this.marks.push([this.newlines + 1, start]);
      else continue;
      this.lastCheckpoint = start;
    }
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1];
    this.bytes += chunk.length;
  }

  finish(): LineIndex {
    // A file that ends within the window after its first CR has no LF there: its lines end in CR.
    if (this.eol === undefined && this.heldBytes > 0) this.decide(CR);
    const cr = this.eol === CR;
    const lines = this.newlines + (this.bytes > 0 && this.lastByte !== (cr ? CR : NL) ? 1 : 0);
    // A checkpoint recorded right after the final newline points at a line that does not exist.
    const needed = Math.max(1, Math.ceil(lines / this.every));
    return {
      lines,
      bytes: this.bytes,
      every: this.every,
      offsets: this.offsets.slice(0, needed),
      marks: this.marks.filter(([line]) => line <= lines),
      markBytes: this.markBytes,
      ...(cr ? { lineEnd: "cr" as const } : {}),
    };
  }
}

export interface ReadLinesResult {
  lines: string[];
  /** The first and last line returned (to = from - 1 when none are). */
  from: number;
  to: number;
  /** The text was cut at maxBytes (or the scan limit) before line `to` of the request. */
  truncated: boolean;
  bytesRead: number;
  totalLines: number;
  /** The requested range starts after the last line of the file. */
  pastEnd: boolean;
  /** When the cut fell inside line `to`: the bytes of that line given so far (its own start counted from 0). */
  cutAtByte?: number;
  /** `skipBytes` goes past the end of line `from` (nothing is returned). */
  offsetPastLine?: true;
}

export interface ReadLinesOptions {
  /** Cap on the returned text in UTF-8 bytes (each line also counts one for its newline). */
  maxBytes?: number;
  /** Size of each ranged read. */
  chunkBytes?: number;
  /** Cap on bytes read in one call: bounds the work when the lines before `from` are huge. */
  maxScanBytes?: number;
  /** Bytes of line `from` to skip (moved on to a character's start): reading on inside one long line. */
  skipBytes?: number;
}

interface Checkpoint {
  line: number;
  at: number;
}

/** The checkpoint nearest before line `line` (or at it), and the first one after it. */
function checkpointsAround(index: LineIndex, line: number): { before: Checkpoint; after?: Checkpoint } {
  const k = Math.floor((line - 1) / index.every);
  const kb = Math.max(0, Math.min(k, index.offsets.length - 1));
  let before: Checkpoint = { line: kb * index.every + 1, at: index.offsets[kb] ?? 0 };
  let after: Checkpoint | undefined =
    k + 1 < index.offsets.length ? { line: (k + 1) * index.every + 1, at: index.offsets[k + 1] } : undefined;
  const marks = index.marks ?? [];
  let lo = 0;
  let hi = marks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (marks[mid][0] <= line) lo = mid + 1;
    else hi = mid;
  }
  const m = marks[lo - 1];
  if (m && m[0] > before.line) before = { line: m[0], at: m[1] };
  const n = marks[lo];
  if (n && (!after || n[0] < after.line)) after = { line: n[0], at: n[1] };
  return { before, after };
}

/**
 * Lines from..to (1-based, inclusive) through ranged reads that start at the nearest checkpoint.
 * With `skipBytes`, the read jumps to that byte of line `from`; the bytes before it are read only
 * where a line may start without a checkpoint (within `markBytes` of the one before), to tell an
 * offset past the line's end.
 */
export async function readLines(
  reader: RangeReader,
  { index, from, to, ...opts }: { index: LineIndex; from: number; to: number } & ReadLinesOptions,
): Promise<ReadLinesResult> {
  const maxBytes = opts.maxBytes ?? 256 * 1024;
  const chunkBytes = Math.max(1, opts.chunkBytes ?? 64 * 1024);
  const maxScanBytes = opts.maxScanBytes ?? 32 * 1024 * 1024;
  const total = index.lines;
  const first = Math.max(1, Math.floor(Number.isFinite(from) ? from : 1));
  const last = Math.min(total, Math.floor(Number.isFinite(to) ? to : total));
  const end = reader.size;
  const eol = lineEndByte(index);
  let bytesRead = 0;
  const none = (extra: Partial<ReadLinesResult>): ReadLinesResult => ({
    lines: [],
    from: first,
    to: first - 1,
    truncated: false,
    bytesRead,
    totalLines: total,
    pastEnd: false,
    ...extra,
  });
  if (first > total) return none({ pastEnd: true });
  if (last < first) return none({});

  const { before, after } = checkpointsAround(index, first);
  let line = before.line;
  // The current read, where it starts in the file, and the position in it.
  let chunk: Uint8Array = new Uint8Array(0);
  let chunkAt = before.at;
  let i = 0;
  const readAt = async (at: number, until = end) => {
    chunk = await reader.read(at, Math.min(chunkBytes, until - at));
    chunkAt = at;
    i = 0;
    bytesRead += chunk.length;
    return chunk.length > 0;
  };
  /** Reads on when the current read is used up; false at the end of the file or the scan limit. */
  const more = async () => {
    const at = chunkAt + chunk.length;
    if (i < chunk.length) return true;
    if (at >= end || bytesRead >= maxScanBytes) return false;
    return readAt(at);
  };

  // On to the start of line `first`.
  while (line < first) {
    if (!(await more())) return none({ truncated: true });
    const nl = chunk.indexOf(eol, i);
    if (nl === -1) i = chunk.length;
    else {
      line++;
      i = nl + 1;
    }
  }

  const skip = Math.max(0, Math.floor(opts.skipBytes ?? 0));
  let skipped = 0;
  if (skip > 0) {
    const lineStart = chunkAt + i;
    const target = lineStart + skip;
    if (target > end || (after && after.at <= target)) return none({ offsetPastLine: true });
    // At the file's very end: past the last line when that line ends in a newline (no checkpoint
    // follows the last line, and the scan below stops short of a long line's end).
    if (target === end && target > lineStart) {
      const tail = await reader.read(end - 1, 1);
      bytesRead += tail.length;
      if (tail[0] === eol) return none({ offsetPastLine: true });
    }
    // A newline before `target` ends the line short of it; one can only be where no checkpoint tells.
    const unseenEnd = Math.min(target, index.markBytes === undefined ? target : before.at + index.markBytes);
    while (chunkAt + i < unseenEnd) {
      if (i >= chunk.length && (bytesRead >= maxScanBytes || !(await readAt(chunkAt + chunk.length, unseenEnd))))
        return none({ truncated: true });
      const stop = Math.min(chunk.length, unseenEnd - chunkAt);
      const nl = chunk.indexOf(eol, i);
      if (nl !== -1 && nl < stop) return none({ offsetPastLine: true });
      i = stop;
    }
    if (target >= chunkAt && target < chunkAt + chunk.length) i = target - chunkAt;
    else {
      chunk = new Uint8Array(0);
      chunkAt = target;
      i = 0;
    }
    skipped = skip;
  }

  // ignoreBOM: a U+FEFF is text, except at the very start of the file (dropped in emit).
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  const out: string[] = [];
  let outBytes = 0;
  // The bytes of the line being collected, kept until its end so a character split across two
  // reads is decoded whole.
  let parts: Uint8Array[] = [];
  let partLen = 0;
  let truncated = false;
  let done = false;
  let aligning = skip > 0;
  let cutAtByte: number | undefined;

  const emit = (cut: boolean) => {
    let bytes = concatBytes(parts);
    if (cut) bytes = bytes.subarray(0, utf8SafeEnd(bytes));
    if (cut) cutAtByte = (line === first ? skipped : 0) + bytes.length;
    // CRLF: the CR before an LF is part of the line end.
    else if (eol === NL && bytes.length > 0 && bytes[bytes.length - 1] === CR)
      bytes = bytes.subarray(0, bytes.length - 1);
    let text = decoder.decode(bytes);
    if (line === 1 && skipped === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    out.push(text);
    outBytes += bytes.length + 1;
    parts = [];
    partLen = 0;
  };

  outer: while (true) {
    if (i >= chunk.length) {
      const at = chunkAt + chunk.length;
      if (at >= end) break;
      if (bytesRead >= maxScanBytes) {
        truncated = true;
        break;
      }
      if (!(await readAt(at))) break;
    }
    while (i < chunk.length) {
      const nl = chunk.indexOf(eol, i);
      const stop = nl === -1 ? chunk.length : nl;
      if (aligning) {
        // Never start inside a character: on to the next one's first byte (in this read or the next).
        while (i < stop && (chunk[i] & 0xc0) === 0x80) {
          i++;
          skipped++;
        }
        if (i < stop || nl !== -1) aligning = false;
      }
      const take = Math.min(stop - i, Math.max(0, maxBytes - outBytes - partLen));
      if (take > 0) {
        parts.push(chunk.slice(i, i + take));
        partLen += take;
      }
      if (take < stop - i) {
        truncated = true;
        if (partLen > 0) emit(true);
        done = true;
        break outer;
      }
      i = stop;
      if (nl === -1) break;
      emit(false);
      if (line >= last) {
        done = true;
        break outer;
      }
      line++;
      i = nl + 1;
    }
  }
  // The file's final line has no newline: it ends at the end of the file.
  if (!done && !truncated && line <= last && line <= total) emit(false);

  return {
    lines: out,
    from: first,
    to: first + out.length - 1,
    truncated,
    bytesRead,
    totalLines: total,
    pastEnd: false,
    ...(cutAtByte !== undefined ? { cutAtByte } : {}),
  };
}

/** The length of `b` without a trailing, incomplete UTF-8 sequence. */
export function utf8SafeEnd(b: Uint8Array): number {
  let i = b.length - 1;
  let cont = 0;
  while (i >= 0 && cont < 3 && (b[i] & 0xc0) === 0x80) {
    i--;
    cont++;
  }
  if (i < 0) return b.length;
  const lead = b[i];
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return need > cont + 1 ? i : b.length;
}

/**
 * Whether a file's first bytes look like text: UTF-16, or no NUL in the first 8 KB and (nearly) valid UTF-8.
 * A few stray bytes are tolerated so Latin-1 prose with the odd accented letter still counts.
 */
export function isProbablyText(head: Uint8Array): boolean {
  if (utf16Of(head)) return true;
  const b = head.subarray(0, 8192);
  if (b.indexOf(0) !== -1) return false;
  let bad = 0;
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) {
      // Control characters other than tab, newlines, form feed and escape are binary signs.
      if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c && c !== 0x0b && c !== 0x1b) bad++;
      i++;
      continue;
    }
    const need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (need < 0) {
      bad++;
      i++;
      continue;
    }
    let ok = true;
    for (let k = 1; k <= need; k++) {
      if (i + k >= b.length) break; // a character cut by the end of the sample is not an error
      if ((b[i + k] & 0xc0) !== 0x80) ok = false;
    }
    if (!ok) {
      bad++;
      i++;
      continue;
    }
    i += need + 1;
  }
  return bad * 20 <= b.length;
}
