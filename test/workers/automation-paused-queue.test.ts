// The slots of an every-minute automation whose prompt calls a client tool, delivered in one batch:
// the front run's turn pauses (and is stopped), and the runs queued behind it are refused with
// `turn_paused` meanwhile. Each waits for the pause to clear and runs its own prompt, ending with
// its own outcome, never with another run's turn's refusal. Runs written directly, as a tick leaves
// them (no tick here: this file shares storage with others).
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import chat from "../../workers/chat/index";
import { createAutomation, createClientTool } from "./automation-helpers";
import { api, newTenant, transcript } from "./helpers";

const SLOTS = 5;

describe("runs queued behind a run paused on client tools", () => {
  it("each wait for the pause to clear and run their own prompt, none failing with turn_paused", async () => {
    const key = await newTenant();
    await createClientTool(key, "pick_colour");
    const prompt = '@tool tool_activate {"name":"pick_colour"}\n@tool pick_colour {}';
    const id = await createAutomation(key, { channel: "ct", schedule: "* * * * *", prompt });
    const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ t: string }>())!.t;
    const runIds = Array.from({ length: SLOTS }, (_, i) => `run_pausedq${String(i).padStart(19, "0")}`);
    await env.DB.batch(
      runIds.map((runId, i) =>
        env.DB.prepare(
          `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts) VALUES (?, ?, ?, ?, 'queued', ?, 0)`,
        ).bind(
          runId,
          id,
          tenantId,
          new Date(Date.parse("2039-01-01T00:00:00Z") + i * 60_000).toISOString(),
          new Date().toISOString(),
        ),
      ),
    );
    // Up to the queue's three deliveries of each message the consumer hands back.
    let pending = runIds;
    for (let attempts = 1; attempts <= 3 && pending.length > 0; attempts++) {
      const batch = createMessageBatch<unknown>(
        "context-chat-automations",
        pending.map((runId) => ({
          id: `${runId}-${attempts}`,
          timestamp: new Date(),
          attempts,
          body: { kind: "automation", runId },
        })),
      );
      const ctx = createExecutionContext();
      await chat.queue!(batch, env as Env);
      const result = await getQueueResult(batch, ctx);
      const retried = new Set(result.retryMessages.map((m) => m.msgId));
      pending = pending.filter((runId) => retried.has(`${runId}-${attempts}`));
    }

    const runs = (await api("GET", `/v1/automations/${id}/runs?limit=50`, undefined, { key })).json.data;
    expect(runs).toHaveLength(SLOTS);
    for (const run of runs) {
      // Its own turn paused on the client tool and was stopped: the documented outcome, at the first attempt.
      expect(run, JSON.stringify(run)).toMatchObject({ status: "failed", attempts: 1, stopReason: "requires_action" });
      expect(String(run.error)).toMatch(
        /^the turn called client tools \(pick_colour\) that no client of an automation answers; it was stopped/,
      );
      expect(String(run.error)).not.toMatch(/turn_paused|is waiting for client tool results/);
    }
    // Every run's prompt ran, each its own turn on the channel's conversation.
    const conversationId = String(runs[0].conversationId);
    const prompts = (await transcript(conversationId, key)).filter(
      (m) => m.role === "user" && m.content.some((b) => b.type === "text" && b.text === prompt),
    );
    expect(prompts).toHaveLength(SLOTS);
    // And the channel takes a person's post afterwards.
    const post = await api("POST", "/v1/channels/ct/messages", { content: "hello from a person" }, { key });
    expect(post.status, post.text).toBe(200);
  }, 120_000);
});
