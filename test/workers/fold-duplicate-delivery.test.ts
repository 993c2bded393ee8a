// The same fold queue message delivered twice at once (queues deliver at least once): both
// deliveries plan the fold and call the model before either commits, so both calls are paid for,
// and the usage ledger must hold a row for each.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { FoldJob } from "../../core/jobs";
import { runFoldJob } from "../../workers/summarizer/fold";
import { consumeBatch } from "../../workers/summarizer/index";
import { createConversation, send } from "./helpers";
import { leaseJob } from "./fold-scripted";
import { recordingClient } from "./recording-client";

/** Turns until the object dispatches a fold: the job id it leased. */
async function growUntilLease(id: string): Promise<string> {
  for (let i = 0; i < 40; i++) {
    await send(id, `turn ${i} about topic-${i}, the flight plan.\n@reply-chars 1500`);
    const jobId = await leaseJob(id);
    if (jobId) return jobId;
  }
  throw new Error("no fold dispatched");
}

describe("a fold message delivered twice at once", () => {
  it("records the usage of both deliveries' model calls, with the same attempt count", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const jobId = await growUntilLease(id);
    const job: FoldJob = {
      kind: "fold",
      jobId,
      tenantId: "dev",
      conversationId: id,
      requestedAt: new Date().toISOString(),
    };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const rec = recordingClient({ gate });
    const deliver = async () => {
      const batch = createMessageBatch<unknown>("context-chat-jobs", [
        { id: "fold-dup", timestamp: new Date(), attempts: 1, body: job },
      ]);
      await consumeBatch(batch, (j, attempts) =>
        runFoldJob(j as FoldJob, env as Env, { client: rec.client, attempts }).then(() => undefined),
      );
      return getQueueResult(batch, createExecutionContext());
    };
    const both = Promise.all([deliver(), deliver()]);
    // Both deliveries reach the model before either commits.
    while (rec.requests.length < 2) await new Promise((r) => setTimeout(r, 10));
    release();
    const results = await both;
    expect(results.map((r) => r.explicitAcks)).toEqual([["fold-dup"], ["fold-dup"]]);
    expect(rec.requests).toHaveLength(2);

    const rows = await env.DB.prepare(
      `SELECT id, input_tokens AS i FROM usage_events WHERE tenant_id = 'dev' AND conversation_id = ? AND kind = 'fold'`,
    )
      .bind(id)
      .all<{ id: string; i: number }>();
    // Two paid calls, two rows: neither delivery's usage is lost to the other's.
    expect(rows.results).toHaveLength(2);
    expect(new Set(rows.results.map((r) => r.id)).size).toBe(2);
    for (const r of rows.results) expect(r.i).toBeGreaterThan(0);
  });
});
