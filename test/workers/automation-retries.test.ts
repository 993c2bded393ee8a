// Automation runs under the queue's retry rules: each delivery is an attempt, a failed attempt is
// handed back to the queue with its error recorded, a run the queue gives up on is recorded as
// failed by the dead-letter consumer, a redelivery after a crashed attempt runs again, and a
// duplicate delivery does nothing. Deliveries are built with createMessageBatch so the attempt
// counts are exact; automations.test.ts drives the same path through the real queue.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import chat from "../../workers/chat/index";
import { AUTOMATION_DLQ } from "../../workers/chat/automation-runner";
import { api, newTenant, transcript } from "./helpers";
import type { Usage } from "../../core/types";

let runCount = 0;

/** An automation with one claimed run (as the cron trigger leaves it), its slot unique to the test. */
async function claimedRun(prompt: string, status = "queued", attempts = 0) {
  const key = await newTenant();
  const a = await api(
    "POST",
    "/v1/automations",
    { name: "r", channel: "retries", prompt, schedule: "0 * * * *" },
    { key },
  );
  expect(a.status).toBe(201);
  const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
    .bind(a.json.id)
    .first<{ t: string }>())!.t;
  const runId = `run_${String(++runCount).padStart(26, "0")}`.slice(0, 30);
  const slot = new Date(Date.parse("2032-01-01T00:00:00Z") + runCount * 3600_000).toISOString();
  await env.DB.prepare(
    `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(runId, a.json.id, tenantId, slot, status, new Date().toISOString(), attempts)
    .run();
  const run = async () =>
    (await api("GET", `/v1/automations/${a.json.id}/runs`, undefined, { key })).json.data.find((r) => r.id === runId);
  return { key, automationId: a.json.id as string, runId, run };
}

/** One delivery of the run's message, as the queue makes it; what the consumer told the queue. */
async function deliver(runId: string, attempts: number, queue = "context-chat-automations") {
  const batch = createMessageBatch<unknown>(queue, [
    { id: `m${attempts}`, timestamp: new Date(), attempts, body: { kind: "automation", runId } },
  ]);
  const ctx = createExecutionContext();
  await chat.queue!(batch, env as Env);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length === 1, retried: result.retryMessages.length === 1 };
}

const conversationLength = async (id: string | null, key: string) => (id ? (await transcript(id, key)).length : 0);

describe("automation attempts", () => {
  it("hands a failed attempt back to the queue with its error recorded, and a later attempt succeeds", async () => {
    const { runId, run } = await claimedRun("status check\n@model-error 529");
    expect(await deliver(runId, 1)).toEqual({ acked: false, retried: true });
    const failed = await run();
    expect(failed).toMatchObject({ status: "retrying", attempts: 1, finishedAt: null });
    expect(failed!.error).toMatch(/model_error.*529/);

    // The provider recovers (here: the prompt the run sends, fixed at its first attempt, no longer
    // asks the offline model to fail; an edit of the automation's prompt would not reach this run).
    await env.DB.prepare(`UPDATE automation_runs SET prompt = 'status check' WHERE id = ?`).bind(runId).run();
    expect(await deliver(runId, 2)).toEqual({ acked: true, retried: false });
    const done = await run();
    expect(done).toMatchObject({ status: "succeeded", attempts: 2, error: null });
    expect((done!.usage as Usage).output_tokens).toBeGreaterThan(0);
    expect(done!.finishedAt).not.toBeNull();
  });

  it("never runs a completed run again, however often its message is delivered", async () => {
    const { key, runId, run } = await claimedRun("once only");
    expect(await deliver(runId, 1)).toEqual({ acked: true, retried: false });
    const done = await run();
    expect(done!.status).toBe("succeeded");
    const length = await conversationLength(String(done!.conversationId), key);
    expect(length).toBe(2);
    for (const attempts of [1, 2, 3]) expect(await deliver(runId, attempts)).toEqual({ acked: true, retried: false });
    expect(await run()).toEqual(done);
    expect(await conversationLength(String(done!.conversationId), key)).toBe(length);
  });

  it("runs again on the redelivery after an attempt that crashed mid-work, not on a duplicate of it", async () => {
    // Delivery 1 took the run and its invocation died before recording anything.
    const { key, runId, run } = await claimedRun("after the crash", "running", 1);
    expect(await deliver(runId, 1)).toEqual({ acked: true, retried: false });
    expect(await run()).toMatchObject({ status: "running", attempts: 1, conversationId: null });
    expect(await deliver(runId, 2)).toEqual({ acked: true, retried: false });
    const done = await run();
    expect(done).toMatchObject({ status: "succeeded", attempts: 2 });
    const t = await transcript(String(done!.conversationId), key);
    expect(t.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("records a run that fails on every attempt as failed, with its error, from the dead-letter queue", async () => {
    const { runId, run } = await claimedRun("never works\n@model-error 529");
    for (const attempts of [1, 2, 3]) expect(await deliver(runId, attempts)).toEqual({ acked: false, retried: true });
    expect((await run())!.status).toBe("retrying");
    expect(await deliver(runId, 1, AUTOMATION_DLQ)).toEqual({ acked: true, retried: false });
    const dead = await run();
    expect(dead).toMatchObject({ status: "failed", attempts: 3 });
    expect(dead!.error).toMatch(/model_error.*529/);
    expect(dead!.finishedAt).not.toBeNull();
  });

  it("records a run whose last attempt died silently as failed, saying it never finished", async () => {
    const { runId, run } = await claimedRun("crashes", "running", 3);
    expect(await deliver(runId, 1, AUTOMATION_DLQ)).toEqual({ acked: true, retried: false });
    expect(await run()).toMatchObject({ status: "failed", attempts: 3, error: "the run did not finish in 3 attempts" });
  });
});
