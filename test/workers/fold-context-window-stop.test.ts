// A fold reply that stopped at `model_context_window_exceeded` ran out of window mid-answer: it is
// cut off like a `max_tokens` stop, so it is no summary. The old summary stays, the delivery fails
// (the queue retries it), and the paid call is still metered.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api } from "./helpers";
import { leasedFold, leaseJob, scriptedReply } from "./fold-scripted";

const CUT = "The user planned the launch for topic-3 and, after weighing the options, the decision was to";

describe("a fold reply stopped at model_context_window_exceeded", () => {
  it("is not committed as the summary: the delivery fails and the conversation keeps no summary", async () => {
    const job = await leasedFold();
    const { client, calls } = scriptedReply(CUT, "model_context_window_exceeded");
    await expect(runFoldJob(job, env as Env, { client, attempts: 1 })).rejects.toThrow(/cut off/);
    expect(calls).toHaveLength(1);
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.summary).toBeNull();
    expect(meta.foldCount).toBe(0);
    // The job still holds the lease: the queue's retry (or the fallback at its 4th delivery) folds.
    expect(await leaseJob(job.conversationId)).toBe(job.jobId);
    const row = await env.DB.prepare(`SELECT kind, input_tokens AS i FROM usage_events WHERE substr(id, 1, ?) = ?`)
      .bind(`fold:${job.jobId}:1:`.length, `fold:${job.jobId}:1:`)
      .first();
    expect(row).toEqual({ kind: "fold", i: 1500 });
  });

  it("at the cap is cut to it, as a max_tokens stop at the cap is", async () => {
    const job = await leasedFold({ summaryMaxChars: 300 });
    const long = "The user set the launch plan. ".repeat(20);
    const { client } = scriptedReply(long, "model_context_window_exceeded");
    expect(await runFoldJob(job, env as Env, { client, attempts: 1 })).toEqual({ applied: true, reason: "folded" });
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.summary!.length).toBeLessThanOrEqual(300);
    expect(meta.summary!.endsWith(".")).toBe(true);
  });
});
