// DOCX paragraphs inside paragraphs (a text box sits in a run of the paragraph around it and is
// written out before it): the text held while reading stays within the cap however deep they
// nest, and a page read from an offset is the whole read's text there however long a text box
// is, so following document_read's "next" gives the whole text.
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { documentRead } from "../../agent/tools/attachment-tools";
import type { AttachmentAccess } from "../../agent/tools/registry";
import { docxText } from "../../services/attachments/formats/document/docx";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { lcg } from "./format-bytes";

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const docx = (body: string) =>
  zipSync({ "word/document.xml": strToU8(`<w:document ${W}><w:body>${body}</w:body></w:document>`) }, { level: 6 });
const run = (text: string) => `<w:r><w:t>${text}</w:t></w:r>`;
const box = (...paragraphs: string[]) => `<w:r><w:txbxContent>${paragraphs.join("")}</w:txbxContent></w:r>`;
const PAGE = 40_000;
// What paging deep may hold besides the page: the text kept before the offset (docx.ts DROP_MARGIN, 64K, twice).
const DEEP_SLACK = 2 * 64 * 1024;

/** Text in which every 8 chars name their place: a page that starts or ends in the wrong spot shows. */
function marked(prefix: string, length: number): string {
  let s = "";
  for (let i = 0; s.length < length; i++) s += `${prefix}${i.toString(36)} `.padStart(8, "_");
  return s.slice(0, length);
}

/** Every page that document_read's "next" leads to, from offset 0, joined. */
async function followPages(bytes: Uint8Array): Promise<{ text: string; pages: number }> {
  const ID = "att_01JZ0000000000000000000000";
  const ctx = {
    openAttachment: async () => ({
      attachment: { id: ID, name: "d.docx", type: "x", facts: { kind: "document" } },
      reader: memoryRangeReader(bytes),
    }),
  } as unknown as AttachmentAccess;
  let offset: number | undefined = 0;
  let text = "";
  let pages = 0;
  while (offset !== undefined) {
    const out = await documentRead.run({ attachment_id: ID, offset }, ctx);
    expect(out.isError, out.content.slice(0, 200)).toBeFalsy();
    const nl = out.content.indexOf("\n");
    const head = out.content.slice(0, nl);
    text += out.content.slice(nl + 1);
    pages++;
    const next = /"offset":(\d+)\}\]$/.exec(head);
    offset = next ? Number(next[1]) : undefined;
  }
  return { text, pages };
}

describe("docx: nested paragraphs", () => {
  it("holds no more than maxChars of text however deep paragraphs nest", async () => {
    const depth = 500;
    const bytes = docx(`<w:p>${run("A".repeat(40_000))}`.repeat(depth) + "</w:p>".repeat(depth));
    const out = await docxText(memoryRangeReader(bytes), { maxChars: 40_001 });
    // The innermost paragraph is written out first.
    expect(out.text).toBe(`${"A".repeat(40_000)}\n`);
    expect(out.truncated).toBe(true);
    expect(out.peakHeldChars).toBeLessThanOrEqual(40_001);
  });

  it("keeps the text within the cap, in order, when an inner paragraph outgrows the ones around it", async () => {
    const body =
      `<w:p>${run(marked("a", 30_000))}${box(`<w:p>${run(marked("b", 20_000))}${box(`<w:p>${run(marked("c", 25_000))}</w:p>`)}${run(marked("d", 5000))}</w:p>`)}${run(marked("e", 10_000))}</w:p>` +
      `<w:p>${run(marked("f", 1000))}</w:p>`;
    const bytes = docx(body);
    const whole = await docxText(memoryRangeReader(bytes), { maxChars: 1_000_000 });
    expect(whole.text.length).toBe(91_000 + 3);
    for (const maxChars of [1, 10_000, 25_000, 25_001, 40_000, 50_002, 70_000, 91_002, 91_003]) {
      const out = await docxText(memoryRangeReader(bytes), { maxChars });
      expect(out.text, `maxChars ${maxChars}`).toBe(whole.text.slice(0, maxChars));
      expect(out.truncated, `maxChars ${maxChars}`).toBe(maxChars < whole.text.length);
      expect(out.peakHeldChars).toBeLessThanOrEqual(maxChars);
      expect(out.paragraphs).toBe(4);
    }
  });

  it("holds the page and a bounded margin, not all before it, when paging deep into nested paragraphs", async () => {
    const depth = 300;
    const bytes = docx(`<w:p>${run("A".repeat(40_000))}`.repeat(depth) + "</w:p>".repeat(depth));
    const from = 6_000_000;
    const page = await docxText(memoryRangeReader(bytes), { fromChar: from, maxChars: from + PAGE + 1 });
    const expected = Array.from({ length: depth }, () => "A".repeat(40_000))
      .join("\n")
      .slice(from, from + PAGE + 1);
    expect(page.text).toBe(expected);
    expect(page.peakHeldChars).toBeLessThanOrEqual(DEEP_SLACK + PAGE + 1);
  });

  it("a text box longer than the margin inside a long paragraph: every page as the whole read, and the chain of pages gives all", async () => {
    const runs = Array.from({ length: 400 }, (_, i) => run(`${String(i).padStart(4, "0")}${"b".repeat(996)}`));
    runs.splice(300, 0, box(`<w:p>${run(marked("B", 100_000))}</w:p>`));
    const bytes = docx(`<w:p>${run("first")}</w:p><w:p>${runs.join("")}</w:p>`);
    const whole = (await docxText(memoryRangeReader(bytes), { maxChars: 10_000_000 })).text;
    expect(whole.length).toBe(500_007);
    for (const from of [100_000, 160_000, 165_536, 200_000, 250_000, 300_000, 350_000, 460_000]) {
      const page = await docxText(memoryRangeReader(bytes), { fromChar: from, maxChars: from + PAGE + 1 });
      expect(page.text === whole.slice(from, from + PAGE + 1), `from ${from}`).toBe(true);
      expect(page.peakHeldChars).toBeLessThanOrEqual(DEEP_SLACK + PAGE + 1);
    }
    const chain = await followPages(bytes);
    expect(chain.text.length).toBe(whole.length);
    expect(chain.text === whole).toBe(true);
    expect(chain.pages).toBe(Math.ceil(whole.length / PAGE));
  });

  it("a long text box in a text box in a long paragraph: both paragraphs around it read whole", async () => {
    const runs = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => run(marked(`${prefix}${i}.`, 1000)));
    const inner = `<w:p>${runs("c", 120).join("")}</w:p>`;
    const middle = `<w:p>${runs("b", 150).join("")}${box(inner)}${runs("B", 50).join("")}</w:p>`;
    const outer = `<w:p>${runs("a", 200).join("")}${box(middle)}${runs("A", 100).join("")}</w:p>`;
    const bytes = docx(`${outer}<w:p>${run("last")}</w:p>`);
    const whole = (await docxText(memoryRangeReader(bytes), { maxChars: 10_000_000 })).text;
    expect(whole.length).toBe(620_007);
    for (let from = 0; from < whole.length; from += 30_011) {
      const page = await docxText(memoryRangeReader(bytes), { fromChar: from, maxChars: from + PAGE + 1 });
      expect(page.text === whole.slice(from, from + PAGE + 1), `from ${from}`).toBe(true);
      expect(page.peakHeldChars).toBeLessThanOrEqual(DEEP_SLACK + PAGE + 1);
    }
    const chain = await followPages(bytes);
    expect(chain.text === whole).toBe(true);
  });

  it("reads pages through text boxes in text boxes, long and short, as the whole read gives them", async () => {
    const rand = lcg(8);
    const sizes = [3, 700, 9000, 30_000, 70_000, 100_000];
    let label = 0;
    const paragraph = (depth: number): string => {
      const items: string[] = [];
      const n = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) {
        if (depth < 3 && rand() < 0.45) {
          const inner = Array.from({ length: 1 + Math.floor(rand() * 2) }, () => paragraph(depth + 1));
          items.push(box(...inner));
        } else items.push(run(marked(`${(label++).toString(36)}.`, sizes[Math.floor(rand() * sizes.length)])));
      }
      return `<w:p>${items.join("")}</w:p>`;
    };
    const body = Array.from({ length: 2 }, () => paragraph(0)).join("");
    const bytes = docx(body);
    const whole = (await docxText(memoryRangeReader(bytes), { maxChars: 100_000_000 })).text;
    expect(whole.length).toBe(789_028);
    for (let from = 0; from < whole.length; from += 20_011) {
      const page = await docxText(memoryRangeReader(bytes), { fromChar: from, maxChars: from + PAGE + 1 });
      expect(page.text === whole.slice(from, from + PAGE + 1), `from ${from}`).toBe(true);
      expect(page.peakHeldChars).toBeLessThanOrEqual(DEEP_SLACK + PAGE + 1);
    }
  });
});
