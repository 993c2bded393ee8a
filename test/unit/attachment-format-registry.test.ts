// The format registry is the one place an attachment's format is decided: every registered format
// has the whole interface, detection picks the right one for a sample of each kind, and the tools
// an upload activates (and its note names) are the ones its format lists.
import { strToU8, zipSync } from "fflate";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { toolRegistry } from "../../agent/tools";
import { inspectAttachment } from "../../services/attachments/inspect";
import { attachmentNote } from "../../services/attachments/note";
import { detectFormat, FORMATS, formatOfKind, TOOLS_FOR } from "../../services/attachments/formats";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { sniffType } from "../../services/attachments/formats/sniff";
import { LineIndexer } from "../../services/attachments/formats/text/line-index";

const xml = (s: string) => strToU8(`<?xml version="1.0" encoding="UTF-8"?>${s}`);
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const NS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}"`;

async function pdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  doc.addPage([200, 200]);
  return doc.save();
}

const xlsx = () =>
  zipSync({
    "xl/workbook.xml": xml(
      `<workbook ${NS}><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": xml(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    ),
    "xl/worksheets/sheet1.xml": xml(
      `<worksheet ${NS}><dimension ref="A1:B1"/><sheetData><row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c></row></sheetData></worksheet>`,
    ),
  });

const docx = () =>
  zipSync({
    "word/document.xml": xml(
      `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Brief</w:t></w:r></w:p></w:body></w:document>`,
    ),
  });

// 1x1 PNG header: signature, IHDR length/type, width, height; enough for the type and dimensions.
const png = () =>
  Uint8Array.from([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6,
    0, 0, 0,
  ]);

/** One sample upload per format: name, declared type, bytes, and the format and kind it must get. */
const SAMPLES: {
  name: string;
  declared: string | null;
  bytes: () => Uint8Array | Promise<Uint8Array>;
  format: (typeof FORMATS)[number];
  kind: string;
  says: string;
}[] = [
  {
    name: "report.pdf",
    declared: "application/pdf",
    bytes: pdf,
    format: FORMATS.find((f) => f.kind === "pdf")!,
    kind: "pdf",
    says: "2 pages",
  },
  {
    name: "budget.xlsx",
    declared: "application/octet-stream",
    bytes: xlsx,
    format: FORMATS.find((f) =>
      f.detect({
        head: new Uint8Array(),
        name: "",
        declaredType: null,
        type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      }),
    )!,
    kind: "spreadsheet",
    says: "sheets: Budget (1 row x 2 columns)",
  },
  {
    name: "brief.docx",
    declared: null,
    bytes: docx,
    format: FORMATS.find((f) => f.kind === "document")!,
    kind: "document",
    says: "1 paragraph",
  },
  {
    name: "data.csv",
    declared: "application/vnd.ms-excel",
    bytes: () => strToU8("a,b\n1,2\n3,4\n"),
    format: FORMATS.find((f) => f.detect({ head: new Uint8Array(), name: "", declaredType: null, type: "text/csv" }))!,
    kind: "spreadsheet",
    says: "2 rows; columns: a, b",
  },
  {
    name: "photo.jpg",
    declared: "image/jpeg",
    bytes: png,
    format: FORMATS.find((f) => f.kind === "image")!,
    kind: "image",
    says: "1x1 png",
  },
  {
    name: "server.log",
    declared: null,
    bytes: () => strToU8("one\ntwo\nthree\n"),
    format: FORMATS.find((f) => f.kind === "text")!,
    kind: "text",
    says: "3 lines",
  },
  {
    name: "README",
    declared: null,
    bytes: () => strToU8("plain words with no telling name\n"),
    format: FORMATS.find((f) => f.kind === "text")!,
    kind: "text",
    says: "1 line",
  },
];

async function inspect(name: string, declared: string | null, bytes: Uint8Array) {
  const indexer = new LineIndexer();
  indexer.push(bytes);
  const index = indexer.finish();
  return inspectAttachment(memoryRangeReader(bytes), {
    name,
    declaredType: declared,
    text: async () => ({ index, reader: memoryRangeReader(bytes) }),
  });
}

describe("attachment format registry", () => {
  it("every registered format has the whole interface", () => {
    expect(FORMATS.length).toBeGreaterThanOrEqual(6);
    for (const f of FORMATS) {
      expect(f.kind, "kind").toMatch(/^[a-z]+$/);
      expect(f.kind).not.toBe("binary");
      for (const fn of ["detect", "probe", "note", "read"] as const)
        expect(typeof f[fn], `${f.kind}.${fn}`).toBe("function");
      expect(typeof f.keepsKindWhenUnreadable, `${f.kind}.keepsKindWhenUnreadable`).toBe("boolean");
      expect(f.tools.length, `${f.kind} names the tools that read it`).toBeGreaterThan(0);
      // Formats of one kind are one kind to the note and the tools.
      const first = formatOfKind(f.kind)!;
      expect(f.note, `${f.kind} shares its kind's note`).toBe(first.note);
      expect([...f.tools]).toEqual([...first.tools]);
    }
  });

  it("detection picks the right format for a sample of each kind, and none for unknown bytes", async () => {
    expect(new Set(SAMPLES.map((s) => s.format)).size).toBe(FORMATS.length);
    for (const s of SAMPLES) {
      const head = await s.bytes();
      const type = sniffType(head, s.name, s.declared);
      expect(detectFormat({ head, name: s.name, declaredType: s.declared, type }), s.name).toBe(s.format);
    }
    const noise = Uint8Array.from({ length: 64 }, (_, i) => (i * 37) % 7);
    expect(
      detectFormat({ head: noise, name: "blob.bin", declaredType: null, type: sniffType(noise, "blob.bin", null) }),
    ).toBeNull();
  });

  it("an upload's kind, activated tools and note come from its format", async () => {
    for (const s of SAMPLES) {
      const bytes = await s.bytes();
      const { type, facts } = await inspect(s.name, s.declared, bytes);
      expect(facts.kind, s.name).toBe(s.kind);
      expect(facts.problem, s.name).toBeUndefined();
      expect(TOOLS_FOR[facts.kind], s.name).toEqual([...s.format.tools]);
      const note = attachmentNote({ id: "att_x", name: s.name, type, size: bytes.length, facts });
      expect(
        s.format.tools.some((t) => note.includes(t)),
        `${s.name} note names a ${s.kind} tool`,
      ).toBe(true);
      expect(note, `${s.name} note states its facts`).toContain(`; ${s.says}`);
      expect(note).toContain(
        s.format.note(facts, { arg: '"attachment_id":"att_x"', size: bytes.length, tier: "small" }).how,
      );
    }
    const binary = await inspect("blob.bin", null, Uint8Array.from([0, 1, 2, 0, 255, 0]));
    expect(binary.facts).toEqual({ kind: "binary" });
    expect(TOOLS_FOR.binary).toEqual([]);
    expect(
      attachmentNote({ id: "att_x", name: "blob.bin", type: binary.type, size: 6, facts: binary.facts }),
    ).toContain("No tool reads this type");
  });

  it("every tool a format names is registered, and every attachment tool is named by a format", () => {
    const named = new Set(FORMATS.flatMap((f) => f.tools));
    for (const t of named) expect(toolRegistry.get(t), t).toBeDefined();
    const attachmentTools = toolRegistry
      .all()
      .filter((t) => !t.core && /^(file|pdf|image|spreadsheet|document)_/.test(t.name));
    expect(attachmentTools.length).toBeGreaterThan(0);
    for (const t of attachmentTools) expect(named.has(t.name), t.name).toBe(true);
  });

  it("a probe failure keeps the kind only when the bytes proved the format", async () => {
    const brokenPdf = strToU8("%PDF-1.7\nnot really a pdf at all");
    expect((await inspect("x.pdf", null, brokenPdf)).facts).toMatchObject({ kind: "pdf", problem: expect.any(String) });
    const csv = strToU8("a,b\n1,2\n");
    const failing = await inspectAttachment(memoryRangeReader(csv), {
      name: "data.csv",
      declaredType: null,
      text: () => Promise.reject(new Error("the attachment's bytes are gone")),
    });
    expect(failing.facts).toEqual({ kind: "binary", problem: "the attachment's bytes are gone" });
  });
});

describe("format folders", () => {
  const DIR = join(new URL("../..", import.meta.url).pathname, "services/attachments/formats");
  // Each folder's README states these; CSV rows are lines, so spreadsheet may use the line index.
  // core/ is pure code a layer below (the image header parser lives there): any folder may use it.
  const allowed = (folder: string, spec: string) =>
    !spec.startsWith(".") ||
    spec.startsWith("./") ||
    spec.startsWith("../../../../core/") ||
    // Data the format reads (the CMaps), bundled as data modules: data/ holds no code (layers.test.ts).
    spec.startsWith("../../../../data/") ||
    (folder !== "shared" &&
      (spec.startsWith("../shared/") ||
        spec === "../format" ||
        (folder === "spreadsheet" && spec === "../text/line-index")));

  it("a format folder imports only itself, shared/, format.ts and core/; shared/ only itself and core/", () => {
    const folders = readdirSync(DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders).toEqual(expect.arrayContaining(["pdf", "spreadsheet", "document", "image", "text", "shared"]));
    const bad: string[] = [];
    for (const folder of folders) {
      for (const file of readdirSync(join(DIR, folder)).filter((f) => f.endsWith(".ts"))) {
        const text = readFileSync(join(DIR, folder, file), "utf8");
        for (const m of text.matchAll(/\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']/g)) {
          const spec = m[1] ?? m[2];
          if (!allowed(folder, spec)) bad.push(`${folder}/${file} imports ${spec}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });
});
