// PDF fixtures for the pdf tests: pdf-lib documents, hand-built files with classic or stream
// cross-reference data, incremental updates, and the PdfError check they share.
import { deflateSync } from "node:zlib";
import { PDFDocument, StandardFonts, type PDFObject } from "pdf-lib";
import { expect } from "vitest";
import { PdfError } from "../../services/attachments/formats/pdf/read";

export async function kumquatPdf(pages: number, useObjectStreams: boolean): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    doc.addPage([200, 200]).drawText(`page ${i} kumquat${i}`, { x: 10, y: 100, size: 12, font });
  }
  return doc.save({ useObjectStreams });
}

export const latin1 = (s: string) => new Uint8Array(Buffer.from(s, "latin1"));

export const text = (b: Uint8Array) => Buffer.from(b).toString("latin1");

export function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

export function startxrefOf(bytes: Uint8Array): number {
  const m = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(text(bytes.subarray(bytes.length - 64)));
  if (!m) throw new Error("fixture has no startxref");
  return Number(m[1]);
}

/** Serialises one pdf-lib object to bytes. */
function objBytes(o: PDFObject): Uint8Array {
  const buf = new Uint8Array(o.sizeInBytes());
  o.copyBytesInto(buf, 0);
  return buf;
}

/**
 * An incremental update (§7.5.6) of `base`: `edit` changes the loaded document, and the objects
 * that differ afterwards are appended with a classic xref section whose trailer has /Prev.
 */

export async function incrementalUpdate(
  base: Uint8Array,
  edit: (doc: PDFDocument) => Promise<void>,
  trailerExtra = "",
): Promise<Uint8Array> {
  const before = await PDFDocument.load(base, { updateMetadata: false });
  const old = new Map(
    before.context.enumerateIndirectObjects().map(([ref, o]) => [ref.objectNumber, text(objBytes(o))]),
  );
  const doc = await PDFDocument.load(base, { updateMetadata: false });
  await edit(doc);
  doc.setModificationDate(new Date(Date.UTC(2025, 0, 1)));
  const changed = doc.context
    .enumerateIndirectObjects()
    .filter(([ref, o]) => old.get(ref.objectNumber) !== text(objBytes(o)))
    .sort(([a], [b]) => a.objectNumber - b.objectNumber);
  const parts: Uint8Array[] = [base, latin1("\n")];
  let offset = base.length + 1;
  const entries: [number, number][] = [];
  for (const [ref, o] of changed) {
    entries.push([ref.objectNumber, offset]);
    const chunk = concat([latin1(`${ref.objectNumber} 0 obj\n`), objBytes(o), latin1("\nendobj\n")]);
    parts.push(chunk);
    offset += chunk.length;
  }
  let xref = "xref\n";
  for (const [num, off] of entries) xref += `${num} 1\n${String(off).padStart(10, "0")} 00000 n \n`;
  const root = String(doc.context.trailerInfo.Root);
  const info = doc.context.trailerInfo.Info?.toString();
  xref += `trailer\n<< /Size ${doc.context.largestObjectNumber + 1} /Root ${root} ${info ? `/Info ${info}` : ""} /Prev ${startxrefOf(base)} ${trailerExtra} >>\nstartxref\n${offset}\n%%EOF\n`;
  parts.push(latin1(xref));
  return concat(parts);
}

export type Body = string | Uint8Array;

/** `<< dict /Length n >> stream ... endstream`, Flate-compressed unless `filter` says otherwise. */
export function stream(dict: string, data: Body, filter: string | null = "/FlateDecode"): Uint8Array {
  const raw = typeof data === "string" ? latin1(data) : data;
  const body = filter === "/FlateDecode" ? new Uint8Array(deflateSync(raw)) : raw;
  return concat([
    latin1(`<< ${dict} ${filter ? `/Filter ${filter}` : ""} /Length ${body.length} >>\nstream\n`),
    body,
    latin1("\nendstream"),
  ]);
}

/** PNG-predicts rows (filter types cycling 0-4) as /Predictor 12+ writers do. */
function pngPredict(data: Uint8Array, columns: number): Uint8Array {
  const rows = data.length / columns;
  const out: number[] = [];
  for (let r = 0; r < rows; r++) {
    const type = r % 5;
    out.push(type);
    for (let i = 0; i < columns; i++) {
      const x = data[r * columns + i];
      const a = i > 0 ? data[r * columns + i - 1] : 0;
      const b = r > 0 ? data[(r - 1) * columns + i] : 0;
      const c = r > 0 && i > 0 ? data[(r - 1) * columns + i - 1] : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const pred = [0, a, b, (a + b) >> 1, paeth][type];
      out.push((x - pred) & 0xff);
    }
  }
  return Uint8Array.from(out);
}

/**
 * A hand-built PDF: objects by number, an optional object stream holding some of them, and a
 * classic table or a cross-reference stream (W [1 4 2], optional PNG predictor, /Index runs).
 */

export function buildPdf(
  objects: Record<number, Body>,
  opts: {
    root: number;
    info?: number;
    xref?: "table" | "stream";
    predictor?: boolean;
    objStm?: number[];
    trailerExtra?: string;
  },
): Uint8Array {
  const parts: Uint8Array[] = [latin1("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")];
  let offset = parts[0].length;
  const entries = new Map<number, [1, number] | [2, number, number]>();
  const nums = Object.keys(objects)
    .map(Number)
    .sort((a, b) => a - b);
  let next = Math.max(...nums) + 1;
  const write = (num: number, body: Body) => {
    entries.set(num, [1, offset]);
    const chunk = concat([
      latin1(`${num} 0 obj\n`),
      typeof body === "string" ? latin1(body) : body,
      latin1("\nendobj\n"),
    ]);
    parts.push(chunk);
    offset += chunk.length;
  };
  const inStm = new Set(opts.objStm ?? []);
  for (const n of nums) if (!inStm.has(n)) write(n, objects[n]);
  if (inStm.size) {
    const stmNum = next++;
    let header = "";
    let body = "";
    [...inStm].forEach((n, i) => {
      header += `${n} ${body.length} `;
      body += `${text(typeof objects[n] === "string" ? latin1(objects[n] as string) : (objects[n] as Uint8Array))}\n`;
      entries.set(n, [2, stmNum, i]);
    });
    write(stmNum, stream(`/Type /ObjStm /N ${inStm.size} /First ${header.length}`, header + body));
  }
  const trailerCommon = `/Root ${opts.root} 0 R ${opts.info ? `/Info ${opts.info} 0 R` : ""} ${opts.trailerExtra ?? ""}`;
  if (opts.xref === "stream") {
    const xrefNum = next++;
    entries.set(xrefNum, [1, offset]);
    const all = [0, ...[...entries.keys()].sort((a, b) => a - b)];
    const runs: [number, number][] = [];
    for (const n of all) {
      const last = runs[runs.length - 1];
      if (last && last[0] + last[1] === n) last[1]++;
      else runs.push([n, 1]);
    }
    const rows: number[] = [];
    for (const [start, count] of runs) {
      for (let n = start; n < start + count; n++) {
        const e = entries.get(n);
        const [t, f2, f3] = e ? [e[0], e[1], e[0] === 2 ? e[2] : 0] : [0, 0, 65535];
        rows.push(t, (f2 >>> 24) & 255, (f2 >>> 16) & 255, (f2 >>> 8) & 255, f2 & 255, (f3 >> 8) & 255, f3 & 255);
      }
    }
    const data = opts.predictor ? pngPredict(Uint8Array.from(rows), 7) : Uint8Array.from(rows);
    const parms = opts.predictor ? "/DecodeParms << /Predictor 12 /Columns 7 >>" : "";
    const dict = `/Type /XRef /Size ${next} /W [1 4 2] /Index [${runs.flat().join(" ")}] ${parms} ${trailerCommon}`;
    parts.push(concat([latin1(`${xrefNum} 0 obj\n`), stream(dict, data), latin1("\nendobj\n")]));
  } else {
    // Subsections are runs of consecutive numbers, as writers produce them.
    let xref = "xref\n";
    const sorted = [0, ...[...entries.keys()].sort((a, b) => a - b)];
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
      xref += `${sorted[i]} ${j - i + 1}\n`;
      for (let k = i; k <= j; k++)
        xref +=
          sorted[k] === 0
            ? "0000000000 65535 f \n"
            : `${String(entries.get(sorted[k])![1]).padStart(10, "0")} 00000 n \n`;
      i = j + 1;
    }
    parts.push(latin1(`${xref}trailer\n<< /Size ${next} ${trailerCommon} >>\n`));
  }
  parts.push(latin1(`startxref\n${offset}\n%%EOF\n`));
  return concat(parts);
}

export const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

export async function pdfError(p: Promise<unknown>): Promise<PdfError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PdfError);
  return err as PdfError;
}
