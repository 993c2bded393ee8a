// bench:attachments — attachments read on demand, a range at a time:
//  - a 3,000-page PDF: bytes read and time to its page count, time, bytes read and peak heap of a
//    5-page pdf_read, measured on the project's own reader code over a file-backed range reader;
//    then indexing throughput (pages per second) of its first pdf_search through the running
//    stack's job queue;
//  - a text file of BENCH_TEXT_MB (default 1,024 MB) built on the fly: the line index built in one
//    streamed pass, then time and bytes read of a line range near its end.
import { build } from "esbuild";
import {
  closeSync,
  createWriteStream,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { ROOT } from "../stack.mjs";
import { apiClient, get, post, withStack } from "./common.mjs";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

async function loadCore(dir) {
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    `export * from "${ROOT}services/attachments/formats/pdf/read.ts";\nexport * from "${ROOT}services/attachments/formats/text/line-index.ts";\n`,
  );
  const outfile = join(dir, "core.mjs");
  await build({ entryPoints: [entry], bundle: true, format: "esm", platform: "node", outfile, logLevel: "silent" });
  return import(pathToFileURL(outfile).href);
}

function fileReader(path) {
  const fd = openSync(path, "r");
  const size = statSync(path).size;
  const reader = {
    size,
    bytesRead: 0,
    async read(offset, length) {
      const len = Math.max(0, Math.min(length, size - offset));
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, offset);
      reader.bytesRead += len;
      return new Uint8Array(buf.buffer, buf.byteOffset, len);
    },
    close: () => closeSync(fd),
  };
  return reader;
}

async function peakHeapDuring(fn) {
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 1);
  const t0 = performance.now();
  const result = await fn();
  const ms = performance.now() - t0;
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  clearInterval(timer);
  return { result, ms, peakBytes: peak - base };
}

const mb = (n) => `${(n / 1024 / 1024).toFixed(2)} MB`;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

export async function benchAttachments() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-attach-"));
  try {
    const core = await loadCore(dir);
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 3000; i++)
      doc.addPage([300, 200]).drawText(`page ${i} kumquat${i}`, { x: 20, y: 100, font, size: 12 });
    const pdfBytes = await doc.save();
    const pdfPath = join(dir, "book.pdf");
    writeFileSync(pdfPath, pdfBytes);

    console.log(`3,000-page PDF: ${mb(pdfBytes.length)} (pdf-lib, object streams)`);
    let r = fileReader(pdfPath);
    const probe = await peakHeapDuring(() => core.probePdf(r));
    console.log(
      `  page count: ${probe.result.pageCount} in ${probe.ms.toFixed(1)} ms, ${kb(r.bytesRead)} read (${((100 * r.bytesRead) / r.size).toFixed(2)}% of the file)`,
    );
    r.close();
    r = fileReader(pdfPath);
    const read = await peakHeapDuring(() => core.readPdfPages(r, { from: 1500, to: 1504 }));
    console.log(
      `  pdf_read of pages 1500-1504: ${read.ms.toFixed(1)} ms, ${kb(r.bytesRead)} read, peak heap growth ${mb(read.peakBytes)} (Node, the same reader code)`,
    );
    r.close();

    await withStack(async (base) => {
      const conv = (await post(base, "/v1/conversations", { title: "bench" })).json.id;
      const up = await (await apiClient(base)).request("POST /v1/conversations/{id}/attachments", {
        path: { id: conv },
        query: { name: "book.pdf" },
        body: pdfBytes,
        headers: { "content-type": "application/pdf" },
      });
      if (up.status !== 201) throw new Error(`upload: ${up.status} ${up.text.slice(0, 200)}`);
      const att = up.data;
      const t0 = Date.now();
      // The first search starts the indexing; it waits up to ~25 s and returns what is indexed.
      await post(base, `/v1/conversations/${conv}/messages`, {
        content: `@tool pdf_search {"attachment_id":"${att.id}","query":"kumquat2750"}`,
      });
      let pages = 0;
      for (let i = 0; i < 600 && pages < 3000; i++) {
        pages = (await get(base, `/v1/conversations/${conv}/attachments/${att.id}`)).pagesIndexed ?? 0;
        if (pages < 3000) await new Promise((res) => setTimeout(res, 500));
      }
      const s = (Date.now() - t0) / 1000;
      console.log(
        `  first pdf_search indexing through the job queue (local stack): ${pages} pages in ${s.toFixed(1)} s = ${(pages / s).toFixed(0)} pages/s`,
      );
    });

    const targetMb = Number(process.env.BENCH_TEXT_MB ?? 1024);
    const textPath = join(dir, "big.log");
    const line = (n) =>
      `${new Date(1_700_000_000_000 + n * 1000).toISOString()} worker-${n % 97} request ${n} served in ${(n * 7) % 1000} ms\n`;
    const out = createWriteStream(textPath);
    let bytes = 0;
    let lines = 0;
    while (bytes < targetMb * 1024 * 1024) {
      let chunk = "";
      for (let k = 0; k < 10_000; k++) chunk += line(++lines);
      bytes += chunk.length;
      if (!out.write(chunk)) await new Promise((res) => out.once("drain", res));
    }
    await new Promise((res) => out.end(res));
    console.log(`\ntext file: ${mb(bytes)}, ${lines.toLocaleString("en-US")} lines (built on the fly)`);
    const indexer = new core.LineIndexer();
    const t0 = performance.now();
    const stream = (await import("node:fs")).createReadStream(textPath, { highWaterMark: 1024 * 1024 });
    for await (const chunk of stream) indexer.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
    const index = indexer.finish();
    console.log(
      `  line index: one streamed pass in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${index.offsets.length.toLocaleString("en-US")} checkpoints (${kb(JSON.stringify(index).length)} stored)`,
    );
    r = fileReader(textPath);
    const from = index.lines - 1000;
    const tail = await peakHeapDuring(() => core.readLines(r, { index, from, to: from + 2 }));
    console.log(
      `  file_read of lines ${from.toLocaleString("en-US")}-${(from + 2).toLocaleString("en-US")}: ${tail.ms.toFixed(1)} ms, ${kb(r.bytesRead)} read, peak heap growth ${mb(tail.peakBytes)}`,
    );
    console.log(`  ${tail.result.lines[0].slice(0, 80)}`);
    r.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
