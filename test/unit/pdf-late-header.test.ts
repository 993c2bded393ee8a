// Files pdf.js opens although their %PDF- header is late or missing: they are PDFs when their name,
// declared type or a header in the first 1024 bytes points there and the probe reads them; a file
// that only claims to be a PDF stays what it is, and nothing scans it whole.
import { readFileSync } from "node:fs";
import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { inspectAttachment } from "../../services/attachments/inspect";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { LineIndexer } from "../../services/attachments/formats/text/line-index";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/pdf/${name}`, import.meta.url)));

async function inspect(name: string, declared: string | null, bytes: Uint8Array) {
  const reader = memoryRangeReader(bytes);
  const text = async () => {
    const indexer = new LineIndexer();
    indexer.push(bytes);
    return { index: indexer.finish(), reader: memoryRangeReader(bytes) };
  };
  return {
    ...(await inspectAttachment(reader, { name, declaredType: declared, text })),
    bytesRead: reader.bytesRead,
  };
}

async function twoPages(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  doc.addPage([200, 200]);
  return doc.save();
}

const concat = (a: Uint8Array, b: Uint8Array) => Uint8Array.from([...a, ...b]);

describe("PDF headers where pdf.js finds them", () => {
  it("a file with no %PDF- header is a PDF when its name or declared type says so and it opens", async () => {
    const bytes = fixture("pdfjs--bug1606566.pdf");
    for (const [name, declared] of [
      ["bug.pdf", null],
      ["upload", "application/pdf"],
    ] as const) {
      const out = await inspect(name, declared, bytes);
      expect(out.type, name).toBe("application/pdf");
      expect(out.facts, name).toMatchObject({ kind: "pdf", pageCount: 1 });
      expect(out.facts.problem, name).toBeUndefined();
    }
  });

  it("a %PDF- header after junk in the first 1024 bytes makes it a PDF whatever its name", async () => {
    const bytes = concat(
      new TextEncoder().encode("Some junk a mail gateway put before the header\n\n"),
      await twoPages(),
    );
    const out = await inspect("scan.bin", null, bytes);
    expect(out.type).toBe("application/pdf");
    expect(out.facts).toMatchObject({ kind: "pdf", pageCount: 2 });
  });

  it("a file that only claims to be a PDF is not filed as one, and is not read whole", async () => {
    let seed = 7;
    const noise = new Uint8Array(1 << 20).map(() => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff);
    const fake = await inspect("invoice.pdf", "application/pdf", noise);
    expect(fake.facts).toEqual({ kind: "binary" });
    expect(fake.bytesRead).toBeLessThan(64 * 1024);

    const text = new TextEncoder().encode(`notes on the %PDF-1.7 header\n${"a line of notes\n".repeat(20_000)}`);
    const notes = await inspect("notes.txt", null, text);
    expect(notes.facts).toMatchObject({ kind: "text", lines: 20_001 });
  });
});
