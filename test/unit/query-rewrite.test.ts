// The scripted stand-in for the model's query rewrite (scripts/bench/query-rewrite.mjs), which
// bench:recall-public --rewrite and bench:recall-tune --rewrite rank: the question's key nouns, and
// the reciprocal-rank fusion of two searches.
import { describe, expect, it } from "vitest";
import { fuse, keyNouns } from "../../scripts/bench/query-rewrite.mjs";

describe("the scripted query rewrite", () => {
  it("keeps a question's names, subject words and identifiers, and drops what frames it as a question", () => {
    expect(keyNouns("How long did I say my commute to the office was?")).toBe("long commute office");
    expect(keyNouns("What did Melanie paint recently?")).toBe("Melanie paint");
    expect(keyNouns("Regarding the WhatsApp tool from last time, what do you need from me to move forward?")).toBe(
      "Regarding WhatsApp tool move forward",
    );
    // Contractions lose their clipped piece, identifiers stay whole, a word is kept once.
    expect(keyNouns("What's the status of INV-4471? I'm asking about INV-4471 and invoice.pdf")).toBe(
      "status INV-4471 asking invoice.pdf",
    );
    expect(keyNouns("What did you tell me?")).toBeNull();
  });

  it("fuses rankings by reciprocal rank, each read to its depth", () => {
    // A tie (b and d, both second once) keeps the order first seen.
    expect(
      fuse([
        ["a", "b", "c"],
        ["c", "d"],
      ]),
    ).toEqual(["c", "a", "b", "d"]);
    // Read to depth 1, only the two firsts count.
    expect(
      fuse(
        [
          ["a", "b"],
          ["c", "b"],
        ],
        1,
      ),
    ).toEqual(["a", "c"]);
  });
});
