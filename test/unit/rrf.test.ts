import { describe, expect, it } from "vitest";
import { RRF_K, reciprocalRankFusion } from "../../core/rrf";

describe("reciprocal-rank fusion", () => {
  it("sums 1/(k + rank) over the lists, so agreement beats one list's top", () => {
    const fused = reciprocalRankFusion([
      ["a", "b", "c"],
      ["b", "d", "a"],
    ]);
    expect(fused.map((f) => f.id)).toEqual(["b", "a", "d", "c"]);
    expect(fused[0].score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 12);
    expect(fused.find((f) => f.id === "c")!.score).toBeCloseTo(1 / (RRF_K + 3), 12);
  });
  it("weights a list and breaks ties by first appearance", () => {
    expect(reciprocalRankFusion([["x"], ["y"]]).map((f) => f.id)).toEqual(["x", "y"]);
    expect(reciprocalRankFusion([["x"], ["y"]], { weights: [1, 2] }).map((f) => f.id)).toEqual(["y", "x"]);
    expect(reciprocalRankFusion([["x", "y"], ["y"]], { k: 0 }).map((f) => f.score)).toEqual([1 / 2 + 1, 1]);
  });
});
