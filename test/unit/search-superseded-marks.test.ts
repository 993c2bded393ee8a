// Search marks the hits a regenerate replaced from their conversations' heads (markSuperseded): a
// note on the page, so a head that cannot be read leaves only its own conversation's hits unmarked.
import { afterEach, describe, expect, it, vi } from "vitest";
import { conversationHeadKey } from "../../r2-layout/index";
import type { SearchHit } from "../../services/cortex/search-index";
import { markSuperseded } from "../../services/cortex/shard";

const hit = (conversationId: string, seq: number): SearchHit =>
  ({ kind: "message", id: `msg-${conversationId}-${seq}`, conversationId, seq, role: "assistant" }) as SearchHit;

/** A record whose `c-good` head marks seq 2 as replaced, and whose `c-bad` head read always fails. */
function record(reads: string[]): R2Bucket {
  const heads: Record<string, unknown> = {
    [conversationHeadKey("t1", "c-good")]: {
      tenantId: "t1",
      id: "c-good",
      superseded: [{ fromSeq: 1, toSeq: 2, by: "msg_copy" }],
    },
  };
  return {
    get: async (key: string) => {
      reads.push(key);
      if (key === conversationHeadKey("t1", "c-bad")) throw new Error("R2 internal error");
      const head = heads[key];
      return head ? ({ json: async () => head } as unknown as R2ObjectBody) : null;
    },
  } as unknown as R2Bucket;
}

afterEach(() => vi.restoreAllMocks());

describe("markSuperseded", () => {
  it("marks the replaced hits and leaves a conversation whose head cannot be read unmarked, not the page failed", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const reads: string[] = [];
    const out = await markSuperseded([hit("c-good", 2), hit("c-bad", 1), hit("c-good", 3), hit("c-none", 1)], {
      record: record(reads),
      tenantId: "t1",
    });
    expect(out.map((h) => [h.id, h.superseded ?? false, h.supersededBy ?? null])).toEqual([
      ["msg-c-good-2", true, "msg_copy"],
      ["msg-c-bad-1", false, null],
      ["msg-c-good-3", false, null],
      ["msg-c-none-1", false, null],
    ]);
    expect(warn.mock.calls.some((c) => String(c[0]).includes("c-bad"))).toBe(true);
    // One head a conversation (the failing one retried), never one a hit.
    expect(reads.filter((k) => k === conversationHeadKey("t1", "c-good"))).toHaveLength(1);
  }, 20_000);
});
