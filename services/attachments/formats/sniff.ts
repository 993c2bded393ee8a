// The MIME type of an upload, decided once for every format: magic bytes first, then the file
// name's extension, then the declared type, so a wrong extension or declared type does not decide
// which reader a file is handed to. The formats' `detect` then match on this type.
import {
  DOCX_TYPE as DOCX,
  isBmp,
  isGif,
  isJpeg,
  isPdf,
  isPng,
  isWebp,
  isZip,
  PPTX_TYPE as PPTX,
  XLSX_TYPE as XLSX,
} from "./shared/magic";

const TEXT_TYPES: Record<string, string> = {
  txt: "text/plain",
  text: "text/plain",
  log: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  tab: "text/tab-separated-values",
  json: "application/json",
  jsonl: "application/x-ndjson",
  ndjson: "application/x-ndjson",
  xml: "text/xml",
  // SVG is XML text (the text format reads it); its own type is kept.
  svg: "image/svg+xml",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "text/javascript",
  jsx: "text/javascript",
  ts: "text/x-typescript",
  tsx: "text/x-typescript",
  mts: "text/x-typescript",
  py: "text/x-python",
  rb: "text/x-ruby",
  go: "text/x-go",
  rs: "text/x-rust",
  java: "text/x-java",
  kt: "text/x-kotlin",
  swift: "text/x-swift",
  c: "text/x-c",
  h: "text/x-c",
  cc: "text/x-c++",
  cpp: "text/x-c++",
  hpp: "text/x-c++",
  cs: "text/x-csharp",
  php: "text/x-php",
  sh: "text/x-shellscript",
  bash: "text/x-shellscript",
  sql: "text/x-sql",
  yaml: "text/yaml",
  yml: "text/yaml",
  toml: "text/x-toml",
  ini: "text/plain",
  cfg: "text/plain",
  conf: "text/plain",
  env: "text/plain",
  rst: "text/x-rst",
  tex: "text/x-tex",
};

// Types whose magic bytes we check: a declared one that the bytes contradict is not believed.
const MAGIC_CHECKED = new Set([
  "application/pdf",
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/bmp",
  "application/zip",
  XLSX,
  DOCX,
  PPTX,
]);

function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : "";
}

/** A MIME type: magic bytes first, then the file name's extension, then the declared type. */
export function sniffType(head: Uint8Array, name: string, declared: string | null): string {
  const ext = extensionOf(name);
  const decl = declared ? declared.split(";")[0].trim().toLowerCase() : "";
  if (isPdf(head)) return "application/pdf";
  if (isPng(head)) return "image/png";
  if (isJpeg(head)) return "image/jpeg";
  if (isGif(head)) return "image/gif";
  if (isWebp(head)) return "image/webp";
  if (isBmp(head)) return "image/bmp";
  if (isZip(head)) {
    // An OOXML file is a plain ZIP; only its name (or its declared type) says which kind.
    if (ext === "xlsx" || ext === "xlsm") return XLSX;
    if (ext === "docx" || ext === "docm") return DOCX;
    if (ext === "pptx") return PPTX;
    if (decl === XLSX || decl === DOCX || decl === PPTX) return decl;
    return "application/zip";
  }
  if (TEXT_TYPES[ext]) return TEXT_TYPES[ext];
  if (decl?.includes("/") && !MAGIC_CHECKED.has(decl)) return decl;
  return "application/octet-stream";
}
