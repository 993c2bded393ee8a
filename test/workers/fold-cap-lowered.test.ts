// A fold whose summary was written (and paid for) under one summaryMaxChars lands when the cap is
// lowered while its call runs: the commit holds it to the cap in force then, as the summarizer holds
// an overlong reply to it, and never stores a summary over it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { capSummary } from "../../core/fold";
import { runFoldJob } from "../../workers/summarizer/fold";
import { leasedFold, scriptedReply } from "./fold-scripted";
import { api } from "./helpers";

/** About 1,900 chars of whole sentences: well within the default cap, well over the lowered one. */
const LONG_SUMMARY = Array.from(
  { length: 30 },
  (_, i) => `Topic ${i} of the flight plan was settled with the crew and noted in the log.`,
).join(" ");

describe("a fold whose summaryMaxChars is lowered while its call runs", () => {
  it("lands its paid summary, re-capped at a sentence end to the cap in force at commit", async () => {
    const job = await leasedFold({ summaryMaxChars: 6_000 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { client, calls } = scriptedReply(LONG_SUMMARY, "end_turn", { gate });
    const folding = runFoldJob(job, env as Env, { client, attempts: 1 });
    while (calls.length < 1) await new Promise((r) => setTimeout(r, 10));
    const patched = await api("PATCH", `/v1/conversations/${job.conversationId}`, {
      settings: { summaryMaxChars: 500 },
    });
    expect(patched.status).toBe(200);
    release();
    expect(await folding).toEqual({ applied: true, reason: "folded" });
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.foldCount).toBe(1);
    expect(meta.foldInFlight).toBe(false);
    expect(meta.summary!.length).toBeLessThanOrEqual(500);
    expect(meta.summary).toBe(capSummary(LONG_SUMMARY, 500));
    expect(meta.summary).toMatch(/log\.$/);
    // Cut where a sentence ends, not to nothing: the paid work lands.
    expect(meta.summary!.length).toBeGreaterThan(300);
  });

  it("stores a summary that already fits unchanged", async () => {
    const job = await leasedFold({ summaryMaxChars: 6_000 });
    const { client } = scriptedReply(LONG_SUMMARY, "end_turn");
    expect(await runFoldJob(job, env as Env, { client, attempts: 1 })).toEqual({ applied: true, reason: "folded" });
    expect((await api("GET", `/v1/conversations/${job.conversationId}`)).json.summary).toBe(LONG_SUMMARY);
  });
});
