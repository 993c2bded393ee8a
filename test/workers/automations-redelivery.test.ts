// An automation run redelivered after its consumer died, and a slow run the cron tick must not
// close: one turn per slot, whose outcome the run records however many deliveries it takes.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import chat from "../../workers/chat/index";
import { runAutomation } from "../../workers/chat/automation-runner";
import { tick } from "./automation-helpers";
import { api, eventually, newTenant, transcript } from "./helpers";
import type { Usage } from "../../core/types";

let runCount = 0;

/**
 * An automation on its own channel with one claimed run, queued `queuedAgoMs` ago. Its schedule
 * (1 January) leaves the test's ticks nothing else to claim on the channel.
 */
async function claimedRun(prompt: string, queuedAgoMs = 0) {
  const key = await newTenant();
  const a = await api(
    "POST",
    "/v1/automations",
    { name: "r", channel: `redelivery-${++runCount}`, prompt, schedule: "0 0 1 1 *" },
    { key },
  );
  expect(a.status).toBe(201);
  const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
    .bind(a.json.id)
    .first<{ t: string }>())!.t;
  const runId = `run_redelivery${String(runCount).padStart(16, "0")}`;
  const queuedAt = Date.now() - queuedAgoMs;
  const slot = new Date(Date.parse("2033-01-01T00:00:00Z") + runCount * 3600_000).toISOString();
  await env.DB.prepare(
    `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts) VALUES (?, ?, ?, ?, 'queued', ?, 0)`,
  )
    .bind(runId, a.json.id, tenantId, slot, new Date(queuedAt).toISOString())
    .run();
  const run = async () =>
    (await api("GET", `/v1/automations/${a.json.id}/runs`, undefined, { key })).json.data.find((r) => r.id === runId);
  return { key, runId, queuedAt, run };
}

/** One delivery of the run's message, as the queue makes it; what the consumer told the queue. */
async function deliver(runId: string, attempts: number) {
  const batch = createMessageBatch<unknown>("context-chat-automations", [
    { id: `m${attempts}`, timestamp: new Date(), attempts, body: { kind: "automation", runId } },
  ]);
  const ctx = createExecutionContext();
  await chat.queue!(batch, env as Env);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length === 1, retried: result.retryMessages.length === 1 };
}

const roles = async (conversationId: string, key: string) => (await transcript(conversationId, key)).map((m) => m.role);

describe("a redelivered automation run", () => {
  it("takes the outcome of the turn a crashed attempt finished, instead of running the prompt again", async () => {
    const { key, runId, run } = await claimedRun("daily digest\n@reply-chars 300");
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    const first = (await run())!;
    expect(first).toMatchObject({ status: "succeeded", attempts: 1 });
    // The invocation died after the turn ended, before it recorded the outcome.
    await env.DB.prepare(
      `UPDATE automation_runs SET status = 'running', conversation_id = NULL, usage = NULL, finished_at = NULL WHERE id = ?`,
    )
      .bind(runId)
      .run();
    expect(await deliver(runId, 2)).toEqual({ acked: true, retried: false });
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", attempts: 2, conversationId: first.conversationId });
    expect(await roles(String(done.conversationId), key)).toEqual(["user", "assistant"]);
    expect((done.usage as Usage).output_tokens).toBe((first.usage as Usage).output_tokens);
  });

  it("waits for the turn a crashed attempt left running, then takes its outcome: one turn for the slot", async () => {
    const { key, runId, run } = await claimedRun("daily digest\n@reply-chars 300\n@stream-pace 200");
    // Attempt 1's invocation (here still alive, as its turn is in the conversation's object).
    const crashed = runAutomation(env as Env, runId, 1);
    const conversationId = await eventually(async () => {
      const r = await run();
      if (r?.conversationId) return String(r.conversationId);
      // Before the run names its conversation: the channel's, once the prompt is in it.
      const channels = (await api("GET", "/v1/channels", undefined, { key })).json.data as {
        conversationId?: string;
      }[];
      const id = channels[0]?.conversationId;
      return id && (await roles(id, key)).length > 0 ? id : null;
    });
    // The queue redelivers while the first turn still runs: the delivery waits for it.
    const redelivered = deliver(runId, 2);
    await crashed;
    expect(await redelivered).toEqual({ acked: true, retried: false });
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", attempts: 2, conversationId, error: null });
    expect((done.usage as Usage).output_tokens).toBeGreaterThan(0);
    expect(await roles(conversationId, key)).toEqual(["user", "assistant"]);
  });
});

describe("the cron tick's close of unfinished runs", () => {
  it("leaves a slow run alone that was queued long ago but started recently, so its success is kept", async () => {
    const { key, runId, queuedAt, run } = await claimedRun("slow one\n@reply-chars 400\n@stream-pace 300", 29 * 60_000);
    const delivery = deliver(runId, 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await run()).toMatchObject({ status: "running", attempts: 1 });
    await tick(queuedAt + 31 * 60_000);
    expect(await delivery).toEqual({ acked: true, retried: false });
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", error: null });
    expect(done.conversationId).not.toBeNull();
    expect((done.usage as Usage).output_tokens).toBeGreaterThan(0);
    expect(await roles(String(done.conversationId), key)).toEqual(["user", "assistant"]);
  });

  it("closes a run whose latest attempt started longer ago than any attempt lasts", async () => {
    const { runId, run } = await claimedRun("never finishes", 50 * 60_000);
    const now = Date.now();
    await env.DB.prepare(`UPDATE automation_runs SET status = 'retrying', attempts = 2, started_at = ? WHERE id = ?`)
      .bind(new Date(now - 40 * 60_000).toISOString(), runId)
      .run();
    await tick(now);
    expect(await run()).toMatchObject({ status: "failed", error: "the run did not finish" });
  });
});
