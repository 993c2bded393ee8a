// A PDF longer than its page index covers (MAX_INDEXED_PDF_PAGES): only its first pages are ever
// queued for extraction, so it is `indexed` once those are in, not when its full page count is
// (which would never come, and leave it `indexing` for good).
import { beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_INDEXED_PDF_PAGES } from "../../core/jobs";
import type { AttachmentRow } from "../../services/attachments/store";
import { indexPdfPages } from "../../services/attachments/page-index";

const state = { indexed: 0, marked: [] as string[] };

vi.mock("../../services/cortex/routing", async (orig) => ({
  ...(await orig<typeof import("../../services/cortex/routing")>()),
  cortexFor: async () => ({
    index: async (_tenantId: string, docs: readonly unknown[]) => {
      state.indexed += docs.length;
      return undefined;
    },
    countIndexedPages: async () => state.indexed,
    purgeAttachment: async () => {},
  }),
}));
vi.mock("../../services/attachments/store", async (orig) => ({
  ...(await orig<typeof import("../../services/attachments/store")>()),
  getAttachmentRow: async () => ({ id: "att_huge" }),
  markIndexed: async (_db: unknown, _tenantId: string, id: string) => {
    state.marked.push(id);
  },
  // Pages landing while the run is short of its end stamp its progress (pdf_search's stall clock).
  markIndexProgress: async () => {},
}));

const rowOf = (pageCount: number) =>
  ({
    id: "att_huge",
    tenantId: "t",
    conversationId: "conv_x",
    name: "huge.pdf",
    createdAt: new Date().toISOString(),
    facts: JSON.stringify({ kind: "pdf", pageCount }),
  }) as unknown as AttachmentRow;

const pages = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ page: from + i, text: `page ${from + i}` }));

describe("a PDF's page index past the page cap", () => {
  beforeEach(() => {
    state.indexed = 0;
    state.marked = [];
  });

  it("is marked indexed once its first MAX_INDEXED_PDF_PAGES pages are in", async () => {
    const row = rowOf(MAX_INDEXED_PDF_PAGES + 10_000);
    // Every page but the last one that will ever be queued: still indexing.
    state.indexed = MAX_INDEXED_PDF_PAGES - 1;
    expect(await indexPdfPages({} as never, row, [])).toBe(MAX_INDEXED_PDF_PAGES - 1);
    expect(state.marked).toEqual([]);
    // The last queued page lands: nothing more will ever come.
    expect(await indexPdfPages({} as never, row, pages(MAX_INDEXED_PDF_PAGES, MAX_INDEXED_PDF_PAGES))).toBe(
      MAX_INDEXED_PDF_PAGES,
    );
    expect(state.marked).toEqual(["att_huge"]);
  });

  it("a PDF within the cap still waits for every one of its pages", async () => {
    const row = rowOf(120);
    expect(await indexPdfPages({} as never, row, pages(1, 100))).toBe(100);
    expect(state.marked).toEqual([]);
    expect(await indexPdfPages({} as never, row, pages(101, 120))).toBe(120);
    expect(state.marked).toEqual(["att_huge"]);
  });
});
