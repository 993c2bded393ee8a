import { describe, expect, it } from "vitest";
import { queueJobSchema, retryDelaySeconds } from "../../core/jobs";

describe("fold jobs", () => {
  it("backs off exponentially and caps at ten minutes", () => {
    expect([1, 2, 3, 4].map(retryDelaySeconds)).toEqual([10, 20, 40, 80]);
    expect(retryDelaySeconds(30)).toBe(600);
  });
  it("accepts a well-formed fold job and rejects anything else", () => {
    const job = { kind: "fold", jobId: "j", tenantId: "t", conversationId: "c", requestedAt: "2026-01-01T00:00:00Z" };
    expect(queueJobSchema.safeParse(job).success).toBe(true);
    expect(queueJobSchema.safeParse({ ...job, kind: "other" }).success).toBe(false);
    expect(queueJobSchema.safeParse({ ...job, extra: 1 }).success).toBe(false);
    expect(queueJobSchema.safeParse("fold").success).toBe(false);
  });
});
