// pdf_search over a PDF longer than its index covers (MAX_INDEXED_PDF_PAGES): the pages past the
// cap are no indexing to wait for, nor a stall to queue again every ten minutes; the answer says
// which pages were searched.
import { describe, expect, it } from "vitest";
import { MAX_INDEXED_PDF_PAGES } from "../../core/jobs";
import { pdfSearch } from "../../agent/tools/pdf-search";

const ID = "att_01M8XB306NZEEYSE16JBKV2N5X";

describe("pdf_search on a PDF past the index's page cap", () => {
  it("neither waits for nor queues again the pages past the cap, and says only the first are searched", async () => {
    const starts: number[] = [];
    const total = MAX_INDEXED_PDF_PAGES + 10_000;
    const ctx = {
      tenantId: "t",
      conversationId: "conv_here",
      progress: () => {},
      openAttachment: async () =>
        ({
          attachment: { id: ID, name: "huge.pdf", facts: { kind: "pdf", pageCount: total } },
          reader: {},
          text: async () => ({}),
        }) as never,
      pageIndex: {
        // Indexing began an hour ago and covered every page it was given.
        status: async () => ({
          status: "indexing",
          indexed: MAX_INDEXED_PDF_PAGES,
          startedAt: new Date(Date.now() - 3_600_000).toISOString(),
        }),
        start: async (_id: string, pages: number) => {
          starts.push(pages);
        },
        put: async () => null,
      },
      search: async () => [],
    };
    const out = await pdfSearch.run({ attachment_id: ID, query: "tariff" }, ctx as never);
    expect(starts).toEqual([]);
    expect(out.content).not.toMatch(/Indexing continues/);
    expect(out.content).toMatch(/Only its first 50,000 of 60,000 pages are searched/);
  });
});
