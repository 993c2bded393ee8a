// MAX_SLOTS_PER_TICK slots of one automation delivered in one consumer batch each start a turn on
// the same channel conversation at once: the conversation queues the turns one behind another, so
// every run succeeds at its first attempt, none refused as busy, none lost.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_SLOTS_PER_TICK } from "../../services/automations";
import chat from "../../workers/chat/index";
import { createAutomation } from "./automation-helpers";
import { api, newTenant, transcript } from "./helpers";

describe("the slots of one automation delivered in one batch", () => {
  it("all run, each its own turn on the channel's conversation, at the first attempt", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, {
      channel: "burst",
      schedule: "* * * * *",
      prompt: "digest\n@reply-chars 300\n@stream-pace 20",
    });
    const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ t: string }>())!.t;
    // Claimed as a tick leaves them (runs written directly: no tick in this file's shared storage).
    const runIds = Array.from({ length: MAX_SLOTS_PER_TICK }, (_, i) => `run_burst${String(i).padStart(21, "0")}`);
    await env.DB.batch(
      runIds.map((runId, i) =>
        env.DB.prepare(
          `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts) VALUES (?, ?, ?, ?, 'queued', ?, 0)`,
        ).bind(
          runId,
          id,
          tenantId,
          new Date(Date.parse("2038-01-01T00:00:00Z") + i * 60_000).toISOString(),
          new Date().toISOString(),
        ),
      ),
    );
    const batch = createMessageBatch<unknown>(
      "context-chat-automations",
      runIds.map((runId, i) => ({
        id: `m${i}`,
        timestamp: new Date(),
        attempts: 1,
        body: { kind: "automation", runId },
      })),
    );
    const ctx = createExecutionContext();
    await chat.queue!(batch, env as Env);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toHaveLength(MAX_SLOTS_PER_TICK);

    const runs = (await api("GET", `/v1/automations/${id}/runs?limit=50`, undefined, { key })).json.data;
    expect(runs).toHaveLength(MAX_SLOTS_PER_TICK);
    for (const run of runs) expect(run).toMatchObject({ status: "succeeded", attempts: 1, error: null });
    const conversations = new Set(runs.map((r) => r.conversationId));
    expect(conversations.size).toBe(1);
    // Each run's prompt and reply, none lost or merged.
    expect(await transcript(String(runs[0].conversationId), key)).toHaveLength(2 * MAX_SLOTS_PER_TICK);
  }, 120_000);
});
