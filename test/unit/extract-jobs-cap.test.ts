// Indexing a PDF queues one extraction job per chunk of pages, and never more than
// MAX_EXTRACT_JOBS for one file, whatever page count the file gave.
import { describe, expect, it } from "vitest";
import { EXTRACT_CHUNK_PAGES } from "../../core/jobs";
import { extractJobs, MAX_EXTRACT_JOBS } from "../../durable-objects/conversation/tool-context";

const of = (pageCount: number) => extractJobs({ tenantId: "t", attachmentId: "att_x", pageCount });

describe("extraction jobs of one PDF", () => {
  it("one job per chunk, the last one ending at the last page", () => {
    expect(of(0)).toEqual([]);
    expect(of(1)).toEqual([{ kind: "extract", tenantId: "t", attachmentId: "att_x", fromPage: 1, toPage: 1 }]);
    const jobs = of(120);
    expect(jobs.map((j) => [j.fromPage, j.toPage])).toEqual([
      [1, 50],
      [51, 100],
      [101, 120],
    ]);
  });

  it("a page count of 10,000,000 queues at most MAX_EXTRACT_JOBS", () => {
    const jobs = of(10_000_000);
    expect(MAX_EXTRACT_JOBS).toBe(1_000);
    expect(jobs).toHaveLength(MAX_EXTRACT_JOBS);
    expect(jobs.at(-1)).toMatchObject({ toPage: MAX_EXTRACT_JOBS * EXTRACT_CHUNK_PAGES });
  });
});
