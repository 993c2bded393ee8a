// A redelivered automation attempt that waits for the turn an earlier attempt left running: it
// keeps to the consumer's wall-clock limit (no new turn it has no time left to finish) and to its
// hold on the run (a run another delivery took, or the cron tick closed, is left alone).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { closeAbandonedRuns } from "../../services/automations";
import { type AttemptClock, runAutomation, runAutomationAttempt } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, eventually, newTenant, transcript } from "./helpers";

/** A turn that fails for good, after the model client's retries (every request with the prompt fails). */
const FAILING = "flaky digest\n@stream-error api_error after=0";

/** An automation of a tenant of its own, on its own channel, with one claimed run, as the cron trigger leaves it. */
async function failingRun() {
  const key = await newTenant();
  return { key, ...(await claimedRun(key, { prompt: FAILING, label: "attemptlimits", year: 2034 })) };
}

/** The channel's conversation once the run's prompt is in it. */
const channelConversation = (key: string) =>
  eventually(async () => {
    const channels = (await api("GET", "/v1/channels", undefined, { key })).json.data as {
      conversationId?: string;
    }[];
    const id = channels[0]?.conversationId;
    return id && (await transcript(id, key)).length > 0 ? id : null;
  });

const prompts = async (conversationId: string, key: string) =>
  (await transcript(conversationId, key)).filter((m) => m.role === "user").length;

/**
 * The platform's clock, but the attempt's first wait lasts `firstWaitMs` as the attempt reads
 * time (it is a real pause as long as asked for); `duringFirstWait` runs inside that wait.
 */
function waitingClock({
  firstWaitMs = 0,
  duringFirstWait,
}: {
  firstWaitMs?: number;
  duringFirstWait?: () => Promise<void>;
}): AttemptClock & { waits: number } {
  let skew = 0;
  const clock = {
    waits: 0,
    now: () => Date.now() + skew,
    sleep: async (ms: number) => {
      if (clock.waits++ === 0) {
        skew += Math.max(0, firstWaitMs - ms);
        await duringFirstWait?.();
      }
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
  };
  return clock;
}

describe("an attempt waiting for the turn an earlier attempt left running", () => {
  it("after a 9-minute wait for a turn that failed, ends the attempt for a retry instead of starting a new turn past the consumer's limit", async () => {
    const { key, runId, run } = await failingRun();
    // Attempt 1's invocation (here still alive, as its turn is in the conversation's object).
    const crashed = runAutomation(env as Env, runId, 1);
    const conversationId = await channelConversation(key);
    const clock = waitingClock({ firstWaitMs: 9 * 60_000 });
    const failure = await runAutomationAttempt(env as Env, { runId, attempt: 2, clock });
    await crashed;
    expect(clock.waits).toBeGreaterThan(0);
    // Handed back to the queue (the next delivery starts the next key with a whole budget), not
    // recorded as failed for good.
    expect(failure).toMatch(/time/);
    expect(await run()).toMatchObject({ status: "retrying", attempts: 2, finishedAt: null });
    // No second turn was started: the slot's prompt ran once.
    expect(await prompts(conversationId, key)).toBe(1);
  });

  it("after a short wait for a turn that failed, starts the retry's turn itself", async () => {
    const { key, runId, run } = await failingRun();
    const crashed = runAutomation(env as Env, runId, 1);
    const conversationId = await channelConversation(key);
    const clock = waitingClock({});
    const failure = await runAutomationAttempt(env as Env, { runId, attempt: 2, clock });
    await crashed;
    expect(clock.waits).toBeGreaterThan(0);
    // The new turn fails as the first did (the prompt always fails): but it ran, under key 2.
    expect(failure).toMatch(/api_error/);
    expect(await run()).toMatchObject({ status: "retrying", attempts: 2 });
    expect(await prompts(conversationId, key)).toBe(2);
  });

  it("stops quietly, starting no turn, when the cron tick closed the run while it waited", async () => {
    const { key, runId, run } = await failingRun();
    const crashed = runAutomation(env as Env, runId, 1);
    const conversationId = await channelConversation(key);
    const clock = waitingClock({
      duringFirstWait: async () => {
        // The tick finds the run open longer than any attempt lasts, and closes it.
        await env.DB.prepare(`UPDATE automation_runs SET started_at = ? WHERE id = ?`)
          .bind(new Date(Date.now() - 40 * 60_000).toISOString(), runId)
          .run();
        expect(await closeAbandonedRuns(env.DB, Date.now())).toBeGreaterThan(0);
      },
    });
    const failure = await runAutomationAttempt(env as Env, { runId, attempt: 2, clock });
    await crashed;
    expect(clock.waits).toBeGreaterThan(0);
    expect(failure).toBeNull();
    expect(await run()).toMatchObject({ status: "failed", attempts: 2, error: "the run did not finish" });
    expect(await prompts(conversationId, key)).toBe(1);
  });

  it("stops quietly, starting no turn, when a later delivery took the run while it waited", async () => {
    const { key, runId, run } = await failingRun();
    const crashed = runAutomation(env as Env, runId, 1);
    const conversationId = await channelConversation(key);
    const clock = waitingClock({
      duringFirstWait: async () => {
        // Delivery 3 took the run over (as startRun leaves it) and runs it on.
        await env.DB.prepare(`UPDATE automation_runs SET attempts = 3, status = 'running' WHERE id = ?`)
          .bind(runId)
          .run();
      },
    });
    const failure = await runAutomationAttempt(env as Env, { runId, attempt: 2, clock });
    await crashed;
    expect(clock.waits).toBeGreaterThan(0);
    expect(failure).toBeNull();
    expect(await run()).toMatchObject({ status: "running", attempts: 3, error: null, finishedAt: null });
    expect(await prompts(conversationId, key)).toBe(1);
  });
});
