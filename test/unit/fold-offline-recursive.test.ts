// The offline model's fold summaries over many recursive folds: once the summary is at its cap,
// each fold still keeps its own material (the oldest carried items give way first), and the plain
// shape keeps decisions and the last user request.
import { beforeEach, describe, expect, it } from "vitest";
import { buildFoldRequest } from "../../core/fold";
import { catalogEntry } from "../../core/models/lookup";
import { resetOfflineCache } from "../../core/offline-model";
import type { StoredMessage } from "../../core/types";
import { makeClient, type Params, textOf } from "./offline-model-client";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const at = "2026-01-01T00:00:00Z";

beforeEach(() => resetOfflineCache());

/** Fold `f`'s 30 exchanges: each user prompt asks about its own topic; one mid-prompt sentence states a decision. */
function exchanges(f: number): StoredMessage[] {
  return Array.from({ length: 60 }, (_, i) => {
    const e = Math.floor(i / 2);
    const seq = f * 60 + i + 1;
    const text =
      i % 2 === 0
        ? `Please look into topic fold${f}-q${e} and report back with the numbers for it. ${
            e === 12 ? `After review we decided to use engine-${f} instead of the old one. ` : ""
          }Also mention anything unusual about the data you see there.`
        : `Topic fold${f}-q${e} is done: the numbers are in the report, and nothing unusual came up in it.`;
    return { id: `m${seq}`, seq, role: i % 2 ? "assistant" : "user", createdAt: at, content: [{ type: "text", text }] };
  });
}

async function summarize(previousSummary: string | null, f: number, maxChars: number): Promise<string> {
  const request = buildFoldRequest({ model: SONNET, previousSummary, folded: exchanges(f), maxChars });
  return textOf(await makeClient().messages.create(request as unknown as Params));
}

describe("recursive offline fold summaries at the cap", () => {
  it("keeps each fold's own exchanges, its decision and its last request, within the cap", async () => {
    let summary: string | null = null;
    const missing: string[] = [];
    for (let f = 0; f < 4; f++) {
      summary = await summarize(summary, f, 6_000);
      expect(summary.length).toBeLessThanOrEqual(6_000);
      const own = summary.split("\n").filter((line) => line.startsWith(`- Please look into topic fold${f}-q`)).length;
      if (own < 10) missing.push(`fold ${f}: ${own} of its own topics`);
      if (!summary.includes(`we decided to use engine-${f} instead of the old one.`))
        missing.push(`fold ${f}: its decision`);
      if (!summary.includes(`Please look into topic fold${f}-q29 and report back`))
        missing.push(`fold ${f}: its last request`);
    }
    expect(missing).toEqual([]);
    // The oldest material gave way, not the newest: fold 0's first topic is gone by fold 3.
    expect(summary).not.toContain("fold0-q0 ");
  });
});
