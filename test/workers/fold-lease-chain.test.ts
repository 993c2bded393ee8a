// A fold job's lease across a slow queue: a lease that expires while its job waits in the queue, or
// between its retries, re-sends the same job (a turn never starts a new one over it), and the
// deliveries of that job are counted by the lease, so a chain whose model keeps failing reaches the
// fallback summary on its 4th delivery, whatever the queue's own count of the message that carried it.
import Anthropic from "@anthropic-ai/sdk";
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FOLD_CALL_TIMEOUT_MS, type FoldJob, type QueueJob, retryDelaySeconds } from "../../core/jobs";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { FOLD_FALLBACK_ATTEMPT, runFoldJob } from "../../workers/summarizer/fold";
import { consumeBatch } from "../../workers/summarizer/index";
import { leasedFold, stubOf } from "./fold-scripted";
import { api, send } from "./helpers";

const FALLBACK_NOTE = "[Written without the summarizer model";

interface Lease {
  jobId: string;
  expiresAt: number;
}

const lease = (id: string): Promise<Lease | null> =>
  runInDurableObject(stubOf(id), async (_i, state) => {
    const row = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").toArray()[0];
    return row ? (JSON.parse(row.value) as Lease) : null;
  });

/** Time passing for the lease (the only clock the dispatch reads): its expiry moves `ms` closer. */
const ageLease = (id: string, ms: number) =>
  runInDurableObject(stubOf(id), async (_i, state) => {
    state.storage.sql.exec(
      "UPDATE kv SET value = json_set(value, '$.expiresAt', json_extract(value, '$.expiresAt') - ?) WHERE key = 'fold_lease'",
      ms,
    );
  });

const expireLease = (id: string) => ageLease(id, Number.MAX_SAFE_INTEGER / 2);

const meta = async (id: string) => (await api("GET", `/v1/conversations/${id}`)).json;

const jobOf = (conversationId: string, jobId: string): FoldJob => ({
  kind: "fold",
  jobId,
  tenantId: "dev",
  conversationId,
  requestedAt: new Date().toISOString(),
});

/** A client whose every call fails with 529 (as a call that hung to its timeout and was then overloaded). */
function overloaded() {
  let calls = 0;
  const client = new Anthropic({
    apiKey: "offline",
    baseURL: OFFLINE_BASE_URL,
    maxRetries: 0,
    fetch: async () => {
      calls++;
      return Response.json(
        { type: "error", error: { type: "overloaded_error", message: "injected" } },
        { status: 529 },
      );
    },
  });
  return { client, calls: () => calls };
}

/** One queue message delivered through the consumer: whether the queue was asked to retry it. */
async function deliver(message: { job: FoldJob; attempts: number }, client: Anthropic): Promise<boolean> {
  const batch = createMessageBatch<unknown>("context-chat-jobs", [
    { id: "m", timestamp: new Date(), attempts: message.attempts, body: message.job },
  ]);
  const run = (job: QueueJob, attempts: number) =>
    runFoldJob(job as FoldJob, env as Env, { client, attempts }).then(() => undefined);
  await consumeBatch(batch, run);
  return (await getQueueResult(batch, createExecutionContext())).retryMessages.length > 0;
}

/** A turn; a message for each job it sent (the lease taken or renewed from an expired one). */
async function turnSending(id: string, prompt: string): Promise<FoldJob[]> {
  const before = await lease(id);
  await send(id, `${prompt}\n@reply-chars 300`);
  const after = await lease(id);
  const dispatched = !!after && after.expiresAt > Date.now() && !(before && before.expiresAt > Date.now());
  return dispatched ? [jobOf(id, after.jobId)] : [];
}

describe("a fold job waiting in the queue past its lease", () => {
  it("is re-sent, not replaced, by the turns that find its lease expired: the old message still folds", async () => {
    const job = await leasedFold();
    const id = job.conversationId;
    const outcomes = [];
    const resent: string[] = [];
    for (let i = 0; i < 3; i++) {
      await expireLease(id);
      resent.push(...(await turnSending(id, `backlogged turn ${i}`)).map((j) => j.jobId));
      outcomes.push(await runFoldJob(job, env as Env));
    }
    // The first delivery of the job folds; its copies, delivered after its commit, change nothing.
    expect(outcomes[0]).toEqual({ applied: true, reason: "folded" });
    for (const later of outcomes.slice(1))
      expect(later).toEqual({ applied: false, reason: "stale job: not the fold in flight" });
    expect((await meta(id)).foldCount).toBe(1);
    // The turn before the fold sent the same job again, never a job of its own.
    expect(resent[0]).toBe(job.jobId);
  });
});

describe("a fold job whose every call hangs to its timeout, then fails", () => {
  it("commits the fallback summary on the 4th delivery, a user turn during each backoff", async () => {
    const job = await leasedFold();
    const id = job.conversationId;
    const { client, calls } = overloaded();
    const queue = [{ job, attempts: 1 }];
    const delivered: { jobId: string; attempts: number }[] = [];
    let turns = 0;
    while (queue.length && delivered.length < 12 && (await meta(id)).foldCount === 0) {
      const message = queue.shift()!;
      delivered.push({ jobId: message.job.jobId, attempts: message.attempts });
      const retried = await deliver(message, client);
      // The call ran to its timeout, then the queue waited out its backoff.
      await ageLease(id, FOLD_CALL_TIMEOUT_MS + retryDelaySeconds(message.attempts) * 1000);
      if (retried && message.attempts < 6) queue.push({ job: message.job, attempts: message.attempts + 1 });
      for (const sent of await turnSending(id, `a turn during the backoff ${turns++}`))
        queue.push({ job: sent, attempts: 1 });
    }
    const m = await meta(id);
    expect(m.foldCount).toBe(1);
    expect(m.summary).toContain(FALLBACK_NOTE);
    expect(delivered).toEqual([1, 2, 3, 4].map((attempts) => ({ jobId: job.jobId, attempts })));
    expect(calls()).toBe(FOLD_FALLBACK_ATTEMPT);
  });

  it("counts the deliveries of a re-sent job with those before it: the fallback still comes on the 4th", async () => {
    const job = await leasedFold();
    const id = job.conversationId;
    const { client } = overloaded();
    expect(await deliver({ job, attempts: 1 }, client)).toBe(true);
    expect(await deliver({ job, attempts: 2 }, client)).toBe(true);
    // The retry waits behind a backlog longer than the lease: a turn re-sends the job, whose new
    // message the queue counts from 1 again.
    await expireLease(id);
    const [resent] = await turnSending(id, "a turn while the retry waits");
    expect(resent?.jobId).toBe(job.jobId);
    expect(await deliver({ job: resent, attempts: 1 }, client)).toBe(true);
    expect((await meta(id)).foldCount).toBe(0);
    // The chain's 4th delivery (the re-sent message's 2nd) commits the fallback summary.
    expect(await deliver({ job: resent, attempts: 2 }, client)).toBe(false);
    const m = await meta(id);
    expect(m.foldCount).toBe(1);
    expect(m.summary).toContain(FALLBACK_NOTE);
    // The old message's retry, delivered last, is stale and changes nothing.
    expect(await deliver({ job, attempts: 3 }, client)).toBe(false);
    expect((await meta(id)).foldCount).toBe(1);
  });
});
