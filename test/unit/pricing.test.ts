// What a call costs at the catalog's prices.
import { describe, expect, it } from "vitest";
import { catalogEntry, entryFromModelInfo } from "../../core/models/lookup";
import { costOf } from "../../core/pricing";
import type { Usage } from "../../core/types";

const usage = (u: Partial<Usage>): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  ...u,
});

describe("costOf", () => {
  it("prices input, output (thinking included), cache writes and reads, and web searches", () => {
    const sonnet = catalogEntry("claude-sonnet-5-5")!;
    // $2 in, $10 out, $2.50 cache write, $0.10 cache read per million; $10 per 1,000 searches.
    expect(costOf(usage({ input_tokens: 1_000_000 }), sonnet)).toBe(2);
    expect(costOf(usage({ output_tokens: 100_000, thinking_tokens: 80_000 }), sonnet)).toBe(1);
    expect(costOf(usage({ cache_creation_input_tokens: 1_000_000, cache_read_input_tokens: 1_000_000 }), sonnet)).toBe(
      2.6,
    );
    expect(costOf(usage({ web_search_requests: 3 }), sonnet)).toBe(0.03);
  });

  it("prices a long prompt at Haiku 5.5's long-prompt rate, and leaves an unpriced model unpriced", () => {
    const haiku = catalogEntry("claude-haiku-5-5")!;
    expect(costOf(usage({ input_tokens: 100_000, output_tokens: 1_000 }), haiku)).toBe(0.0105);
    expect(costOf(usage({ input_tokens: 100_001, output_tokens: 1_000 }), haiku)).toBe(0.052501);
    expect(costOf(usage({ input_tokens: 10 }), entryFromModelInfo({ id: "claude-next" }))).toBeNull();
  });
});
