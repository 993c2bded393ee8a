// A turn's usage split by the model that spent it (core/usage-by-model.ts): the ledger's rows.
import { describe, expect, it } from "vitest";
import { catalogEntry, entryFromModelInfo } from "../../core/models/lookup";
import { priced } from "../../core/pricing";
import { addUsage, zeroUsage } from "../../core/types";
import { UsageByModel } from "../../core/usage-by-model";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const NEXT = entryFromModelInfo({ id: "claude-next" });

describe("usage by model", () => {
  it("files a refusal fallback to an unpriced model as unpriced (no cost), not as $0", () => {
    const split = new UsageByModel(zeroUsage(), "turn_x");
    const refused = priced({ ...zeroUsage(), input_tokens: 1_000, output_tokens: 10 }, SONNET);
    let total = addUsage(zeroUsage(), refused);
    split.add(total, SONNET);
    // The fallback's call: the catalog has no price for it.
    total = addUsage(total, priced({ ...zeroUsage(), input_tokens: 500_000, output_tokens: 20_000 }, NEXT));
    const rows = split.rows(total, NEXT);
    expect(rows.map((r) => [r.key, r.model])).toEqual([
      ["turn_x", "claude-sonnet-5-5"],
      ["turn_x:claude-next", "claude-next"],
    ]);
    expect(rows[0].usage.cost_usd).toBe(refused.cost_usd);
    expect(rows[1].usage).toMatchObject({ input_tokens: 500_000, output_tokens: 20_000 });
    expect(rows[1].usage.cost_usd).toBeUndefined();
  });
});
