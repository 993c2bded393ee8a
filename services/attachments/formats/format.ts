// One attachment format: how it is recognised, the facts its note states, the tools that read it
// and the function that reads a range of it. Adding a format is a folder exporting one of these
// plus its line in index.ts; a format folder imports only its own files, shared/ and this file.
import type { RangeReader } from "./shared/range-reader";
import type { LineIndex } from "./text/line-index";
import { sliceWhole } from "../../../core/text-cut";

/** What an upload looks like when its format is decided. */
export interface Sample {
  /** The first bytes (8 KB, or the whole file when smaller). */
  head: Uint8Array;
  name: string;
  declaredType: string | null;
  /** The MIME type sniffType decided: magic bytes, then extension, then the declared type. */
  type: string;
}

export interface ProbeContext {
  type: string;
  head: Uint8Array;
  /** The file as text: its line index, built on first call by streaming the file once. */
  text: () => Promise<TextView>;
}

/** A text file as the line readers see it: its line index, and a reader over its text as UTF-8. */
export interface TextView {
  index: LineIndex;
  reader: RangeReader;
}

/** Facts a format establishes for the note; each format fills the fields that concern it. */
export interface FormatFacts {
  pageCount?: number;
  pdfTitle?: string | null;
  encrypted?: boolean;
  /** Opens only with a user password nobody gave: the note asks for it. */
  passwordRequired?: boolean;
  /** How the page count was found: the file's own index, or pdf.js (recovered or decrypted). */
  pageCountSource?: "xref" | "pdfjs";
  lines?: number;
  /** A text file's encoding when it is not UTF-8 (read through a UTF-8 copy). */
  encoding?: string;
  width?: number;
  height?: number;
  format?: string;
  sheets?: { name: string; rows: number; columns: number }[];
  columns?: string[];
  rows?: number;
  paragraphs?: number;
  /** Why a fact could not be established (e.g. a corrupt PDF): said in the note, never hidden. */
  problem?: string;
}

export interface Probed {
  facts: FormatFacts;
  /** A better MIME type than the sniffed one, when the probe learned it. */
  type?: string;
}

export interface NoteContext {
  /** `"attachment_id":"att_…"`, ready to put in a tool call example. */
  arg: string;
  size: number;
  tier: "small" | "medium" | "large";
}

export interface AttachmentFormat<Kind extends string = string> {
  /** What the note, the stored facts and the tools call it; formats may share a kind. */
  readonly kind: Kind;
  /** Whether this format reads the upload; the registry asks formats in order. */
  detect(sample: Sample): boolean;
  /**
   * A weaker sign than `detect` (the name or declared type, a signature a little off its place):
   * the format reads the upload only if its probe succeeds; a failed probe hands it to the next
   * format, so a file that merely claims the format is not filed under it.
   */
  detectIfReadable?(sample: Sample): boolean;
  /** The facts the note states, through ranged reads only. Throws when the file is unreadable. */
  probe(reader: RangeReader, ctx: ProbeContext): Promise<Probed>;
  /**
   * When probe throws, whether the note still files the upload under this kind (its bytes proved
   * the format) or as plain bytes (only its name or type suggested it).
   */
  readonly keepsKindWhenUnreadable: boolean;
  /** The tools that read this format; an upload of it activates them in its conversation. */
  readonly tools: readonly string[];
  /** The note's facts and its "how to read it" sentence. */
  note(facts: FormatFacts, ctx: NoteContext): { facts: string[]; how: string };
  /** Reads one range (pages, rows, lines, characters, or the whole image); the tools call it. */
  readonly read: (reader: RangeReader, ...range: never[]) => Promise<unknown>;
}

/** A number as the note writes it: 12,345. */
export const count = (x: number) => x.toLocaleString("en-US");

/** `x` with its unit, singular for one: "1 line", "2,048 lines". */
export const counted = (x: number, unit: string) => `${count(x)} ${unit}${x === 1 ? "" : "s"}`;

/**
 * Text from the file or its uploader (its name, a PDF's title) inside the note the model takes as
 * the platform's: on one line, without the characters that could close the <attachment> block or
 * reorder what is shown (controls, line and paragraph separators, bidi overrides), `max` at most.
 */
export function noteText(text: string, max = 200): string {
  const flat = text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  // Cut whole: half of a surrogate pair would make every later request one the API refuses.
  const cut = flat.length > max ? `${sliceWhole(flat, 0, max - 1)}…` : flat;
  return cut.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
