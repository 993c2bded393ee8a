// bench:pdf-corpus — the project's PDF reader against pdf.js over a folder of real-world PDFs
// (PDF_CORPUS_DIR; nothing here is written by the project). Per file: does it open (ours, pdf.js),
// do the page counts agree, word-level F1 of our text against pdf.js's over the first
// PDF_CORPUS_PAGES pages (default 5), bytes read for the page count, time. No stack is started.
// pdf.js's results are the reference; where poppler's `pdftotext` is installed its text (default
// reading-order mode) is a second one, and the files where the two references agree with each
// other (word-F1 >= 0.9 between them) are scored on their own. References are cached next to the
// corpus (keyed by file size and name) because they do not change with the project's code.
//   PDF_CORPUS_DIR=/path/to/pdfs [PDF_CMAP_DIR=pdf.js/external/bcmaps for the reference] npm run bench:pdf-corpus [-- --verbose] [-- --save=run.json] [-- --against=run.json]
// --save writes each file's F1 figures; --against lists the files whose F1 moved since a saved run.
// See docs/pdf-corpus.md.
import { spawnSync } from "node:child_process";
import { build } from "esbuild";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../stack.mjs";

const PAGES = Number(process.env.PDF_CORPUS_PAGES ?? 5);
const TIMEOUT_MS = 20_000;

async function loadCore(dir) {
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    `export * from "${ROOT}services/attachments/formats/pdf/read.ts";\nexport { memoryRangeReader } from "${ROOT}services/attachments/formats/shared/range-reader.ts";\nexport { BundledCMaps } from "${ROOT}services/attachments/formats/pdf/cmaps.gen.ts";\n`,
  );
  const outfile = join(dir, "core.mjs");
  await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    outfile,
    logLevel: "silent",
    loader: { ".bcmap": "binary" },
  });
  return import(pathToFileURL(outfile).href);
}

/** Words for F1: NFKC (ligatures), lower case, runs of letters and digits; CJK ideographs and kana one by one. */
export function words(text) {
  const spaced = text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu, " $& ");
  return spaced.match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function wordF1(ours, ref) {
  if (!ref.length && !ours.length) return 1;
  const counts = new Map();
  for (const w of ref) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of ours) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  if (!common) return 0;
  const p = common / ours.length;
  const r = common / ref.length;
  return (2 * p * r) / (p + r);
}

const withTimeout = (promise, what) =>
  Promise.race([
    promise,
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: timed out after ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref(),
    ),
  ]);

const reason = (err) => (err instanceof Error ? err.message : String(err)).replace(/\d+/g, "N").slice(0, 90);

async function pdfjsReference(pdfjs, bytes, cmaps) {
  const task = pdfjs.getDocument({
    data: bytes.slice(),
    useWasm: false,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: 0,
    BinaryDataFactory: cmaps,
  });
  try {
    const doc = await task.promise;
    const pages = [];
    for (let p = 1; p <= Math.min(doc.numPages, PAGES); p++) {
      try {
        const content = await (await doc.getPage(p)).getTextContent();
        pages.push(content.items.map((i) => ("str" in i ? i.str + (i.hasEOL ? "\n" : "") : "")).join(""));
      } catch {
        pages.push("");
      }
    }
    return { pages: doc.numPages, text: pages.join("\n") };
  } finally {
    await task.destroy();
  }
}

/** Whether poppler's pdftotext is on the PATH (the second reference is skipped without it). */
function popplerAvailable() {
  const run = spawnSync("pdftotext", ["-v"], { encoding: "utf8" });
  return !run.error;
}

/** Poppler's text of the first PAGES pages in its default reading-order mode (not -layout). */
function popplerReference(path) {
  const run = spawnSync("pdftotext", ["-q", "-enc", "UTF-8", "-f", "1", "-l", String(PAGES), path, "-"], {
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error) return { error: reason(run.error) };
  if (run.status !== 0) return { error: `pdftotext exit ${run.status}` };
  return { text: run.stdout };
}

const pct = (n, d) => (d ? `${((100 * n) / d).toFixed(1)}%` : "n/a");
const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Files whose F1 against either reference moved by more than 0.01 since an earlier saved run. */
function compareRuns(before, after) {
  const moved = (key, sign) =>
    Object.keys(after)
      .filter(
        (n) => before[n]?.[key] != null && after[n][key] != null && sign * (after[n][key] - before[n][key]) > 0.01,
      )
      .map((n) => `${n} ${before[n][key].toFixed(2)} -> ${after[n][key].toFixed(2)}`);
  for (const [key, label] of [
    ["f1", "pdf.js"],
    ["f1Poppler", "poppler"],
  ]) {
    const worse = moved(key, -1);
    const better = moved(key, 1);
    console.log(`  since the saved run, F1 against ${label}: ${better.length} files better, ${worse.length} worse`);
    for (const line of worse) console.log(`    worse: ${line}`);
  }
}

export async function benchPdfCorpus(args = []) {
  const dirName = process.env.PDF_CORPUS_DIR;
  if (!dirName || !existsSync(dirName)) {
    console.log("set PDF_CORPUS_DIR to a folder of PDF files (see docs/pdf-corpus.md)");
    process.exit(2);
  }
  const verbose = args.includes("--verbose");
  const flag = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const savePath = flag("save");
  const againstPath = flag("against");
  const files = readdirSync(dirName)
    .filter((f) => /\.pdf$/i.test(f))
    .sort();
  const tmp = mkdtempSync(join(tmpdir(), "context-chat-pdf-corpus-"));
  const cachePath = join(dirName, `.pdfjs-reference-p${PAGES}.json`);
  const cache = existsSync(cachePath) ? JSON.parse(readFileSync(cachePath, "utf8")) : {};
  const poppler = popplerAvailable();
  const popplerCachePath = join(dirName, `.poppler-reference-p${PAGES}.json`);
  const popplerCache =
    poppler && existsSync(popplerCachePath) ? JSON.parse(readFileSync(popplerCachePath, "utf8")) : {};
  try {
    const core = await loadCore(tmp);
    const pdfjs = await import("unpdf/pdfjs");
    // The reference reads predefined CMaps from PDF_CMAP_DIR (pdf.js's external/bcmaps) when
    // given, else the ones the project ships.
    const cmapDir = process.env.PDF_CMAP_DIR;
    const cmaps = cmapDir
      ? class {
          async fetch({ filename }) {
            return new Uint8Array(readFileSync(join(cmapDir, filename)));
          }
        }
      : core.BundledCMaps;
    // The project's pdf.js fallback reads the CMaps it ships, as the worker does.
    core.usePdfjsCMaps(core.BundledCMaps);
    const rows = [];
    for (const name of files) {
      const path = join(dirName, name);
      const bytes = new Uint8Array(readFileSync(path));
      const key = `${name}:${statSync(path).size}`;
      let ref = cache[key];
      if (!ref) {
        try {
          ref = await withTimeout(pdfjsReference(pdfjs, bytes, cmaps), "pdf.js");
        } catch (err) {
          ref = { error: reason(err) };
        }
        cache[key] = ref;
      }
      let pop = null;
      if (poppler) {
        pop = popplerCache[key] ?? popplerReference(path);
        popplerCache[key] = pop;
      }
      const refWords = ref.text !== undefined ? words(ref.text) : [];
      const popWords = pop?.text !== undefined ? words(pop.text) : [];
      const row = {
        name,
        ref,
        opened: false,
        pages: null,
        source: null,
        bytesRead: 0,
        ms: 0,
        f1: null,
        f1Poppler: null,
        refsAgree: null,
        error: null,
      };
      if (refWords.length && popWords.length) row.refsAgree = wordF1(refWords, popWords) >= 0.9;
      const t0 = performance.now();
      try {
        const reader = core.memoryRangeReader(bytes);
        const info = await withTimeout(core.probePdf(reader), "probe");
        row.opened = true;
        row.pages = info.pageCount;
        row.source = info.pageCountSource ?? "xref";
        row.bytesRead = reader.bytesRead;
        if (refWords.length || popWords.length) {
          let text = "";
          try {
            const out = await withTimeout(
              core.readPdfPages(core.memoryRangeReader(bytes), {
                from: 1,
                to: Math.max(1, Math.min(info.pageCount, PAGES)),
              }),
              "text",
            );
            text = out.pages.map((p) => p.text).join("\n");
          } catch (err) {
            row.textError = reason(err);
          }
          const ours = words(text);
          if (refWords.length) row.f1 = wordF1(ours, refWords);
          if (popWords.length) row.f1Poppler = wordF1(ours, popWords);
        }
      } catch (err) {
        row.error = reason(err);
        if (refWords.length) row.f1 = 0;
        if (popWords.length) row.f1Poppler = 0;
      }
      row.ms = performance.now() - t0;
      rows.push(row);
      if (verbose)
        console.log(
          `${name}: ours ${row.opened ? `${row.pages} (${row.source})` : `fails: ${row.error}`}; pdf.js ${ref.error ? `fails: ${ref.error}` : ref.pages}${row.f1 !== null ? `; F1 ${row.f1.toFixed(2)}` : ""}${row.f1Poppler !== null ? `; F1 poppler ${row.f1Poppler.toFixed(2)}` : ""}${row.textError ? ` text: ${row.textError}` : ""}`,
        );
    }
    writeFileSync(cachePath, JSON.stringify(cache));
    if (poppler) writeFileSync(popplerCachePath, JSON.stringify(popplerCache));

    const refOpen = rows.filter((r) => !r.ref.error);
    const bothOpen = refOpen.filter((r) => r.opened);
    const agree = bothOpen.filter((r) => r.pages === r.ref.pages);
    const withText = rows.filter((r) => r.f1 !== null);
    const good = withText.filter((r) => r.f1 >= 0.9);
    const opened = rows.filter((r) => r.opened);
    const xrefCounts = opened.filter((r) => r.source === "xref");
    console.log(`PDF corpus: ${rows.length} files from ${dirName} (text compared over the first ${PAGES} pages)`);
    console.log(
      `  open: ours ${opened.length}, pdf.js ${refOpen.length}; of the files pdf.js opens, ours opens ${bothOpen.length} (${pct(bothOpen.length, refOpen.length)})`,
    );
    console.log(
      `  page count agrees with pdf.js: ${agree.length} of ${refOpen.length} files pdf.js opens (${pct(agree.length, refOpen.length)}); ours opens but differs: ${bothOpen.length - agree.length}`,
    );
    console.log(
      `  count found by: ${["xref", "pdfjs"].map((s) => `${s} ${opened.filter((r) => r.source === s).length}`).join(", ")}`,
    );
    console.log(
      `  word F1 >= 0.9 on ${good.length} of ${withText.length} files where pdf.js finds text (${pct(good.length, withText.length)}); median F1 ${quantile(
        withText.map((r) => r.f1),
        0.5,
      ).toFixed(3)}`,
    );
    const kbOf = (xs, q) => `${(quantile(xs, q) / 1024).toFixed(1)} KB`;
    const withPoppler = rows.filter((r) => r.f1Poppler !== null);
    const agreeing = rows.filter((r) => r.refsAgree && r.f1 !== null && r.f1Poppler !== null);
    const eitherGood = agreeing.filter((r) => Math.max(r.f1, r.f1Poppler) >= 0.9);
    const bothGood = agreeing.filter((r) => Math.min(r.f1, r.f1Poppler) >= 0.9);
    if (poppler) {
      console.log(
        `  word F1 >= 0.9 against poppler on ${withPoppler.filter((r) => r.f1Poppler >= 0.9).length} of ${withPoppler.length} files where pdftotext finds text (${pct(withPoppler.filter((r) => r.f1Poppler >= 0.9).length, withPoppler.length)}); median F1 ${quantile(
          withPoppler.map((r) => r.f1Poppler),
          0.5,
        ).toFixed(3)}`,
      );
      console.log(
        `  where pdf.js and poppler agree (F1 >= 0.9 between them, ${agreeing.length} files): F1 >= 0.9 against either ${eitherGood.length} (${pct(eitherGood.length, agreeing.length)}), against both ${bothGood.length} (${pct(bothGood.length, agreeing.length)}); disagrees with both: ${agreeing.length - eitherGood.length}`,
      );
    } else console.log("  poppler column skipped: pdftotext is not installed (Debian: apt-get install poppler-utils)");
    console.log(
      `  bytes read for the count: median ${kbOf(
        opened.map((r) => r.bytesRead),
        0.5,
      )}, p90 ${kbOf(
        opened.map((r) => r.bytesRead),
        0.9,
      )} (counts from xref only: median ${kbOf(
        xrefCounts.map((r) => r.bytesRead),
        0.5,
      )})`,
    );
    console.log(
      `  time per file (count + text): median ${quantile(
        rows.map((r) => r.ms),
        0.5,
      ).toFixed(1)} ms, p90 ${quantile(
        rows.map((r) => r.ms),
        0.9,
      ).toFixed(1)} ms, max ${Math.max(...rows.map((r) => r.ms)).toFixed(0)} ms`,
    );
    const tally = (list, f) => {
      const m = new Map();
      for (const r of list) m.set(f(r), [...(m.get(f(r)) ?? []), r.name]);
      return [...m].sort((a, b) => b[1].length - a[1].length);
    };
    const show = (title, list, f) => {
      if (!list.length) return;
      console.log(`  ${title}: ${list.length}`);
      for (const [why, names] of tally(list, f))
        console.log(
          `    ${names.length} x ${why}  (${names.slice(0, 3).join(", ")}${names.length > 3 ? ", ..." : ""})`,
        );
    };
    show(
      "pdf.js opens, ours fails",
      refOpen.filter((r) => !r.opened),
      (r) => r.error,
    );
    show(
      "page count differs",
      bothOpen.filter((r) => r.pages !== r.ref.pages),
      (r) => `ours ${r.source}`,
    );
    show(
      "word F1 < 0.9",
      withText.filter((r) => r.f1 < 0.9),
      (r) =>
        r.error
          ? `does not open: ${r.error}`
          : r.textError
            ? `text fails: ${r.textError}`
            : r.f1 === 0
              ? "no common words"
              : "partial text",
    );
    if (verbose) for (const r of withText.filter((r) => r.f1 < 0.9)) console.log(`    F1 ${r.f1.toFixed(2)} ${r.name}`);
    if (poppler && agreeing.length > eitherGood.length) {
      console.log(`  disagrees with both references where they agree: ${agreeing.length - eitherGood.length}`);
      for (const r of agreeing.filter((r) => Math.max(r.f1, r.f1Poppler) < 0.9))
        console.log(`    F1 ${r.f1.toFixed(2)} / poppler ${r.f1Poppler.toFixed(2)} ${r.name}`);
    }
    const scores = Object.fromEntries(rows.map((r) => [r.name, { f1: r.f1, f1Poppler: r.f1Poppler }]));
    if (savePath) writeFileSync(savePath, JSON.stringify(scores));
    if (againstPath) compareRuns(JSON.parse(readFileSync(againstPath, "utf8")), scores);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
