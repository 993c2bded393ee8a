// The summarizer's queue consumer and the chat worker's scheduled handler, called the way the
// runtime calls them.
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import chat from "../../workers/chat/index";
import summarizer, { consumeBatch } from "../../workers/summarizer/index";
import { createConversation } from "./helpers";

describe("the job queue consumer", () => {
  it("acks valid jobs, acks and drops malformed ones, and retries failures with backoff", async () => {
    const id = await createConversation();
    const job = {
      kind: "fold",
      jobId: "job-1",
      tenantId: "dev",
      conversationId: id,
      requestedAt: new Date().toISOString(),
    };
    const broken = { ...job, jobId: "job-2", conversationId: 42 };
    const batch = createMessageBatch<unknown>("context-chat-jobs", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: job },
      { id: "m2", timestamp: new Date(), attempts: 1, body: broken },
    ]);
    const ctx = createExecutionContext();
    await summarizer.queue(batch, env as Env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    expect(result.retryMessages).toEqual([]);

    // A job whose run fails is retried with backoff, never acked.
    const failing = createMessageBatch("context-chat-jobs", [
      { id: "m3", timestamp: new Date(), attempts: 3, body: { ...job, jobId: "job-3" } },
    ]);
    const ctx2 = createExecutionContext();
    await consumeBatch(failing, async () => {
      throw new Error("model down");
    });
    const r2 = await getQueueResult(failing, ctx2);
    expect(r2.explicitAcks).toEqual([]);
    expect(r2.retryMessages.map((m) => m.msgId)).toEqual(["m3"]);
  });
});

describe("the cron trigger", () => {
  it("sweeps expired websocket tickets and keeps live ones", async () => {
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO ws_tickets (ticket_hash, tenant_id, conversation_id, expires_at) VALUES ('old', 'dev', 'c', ?), ('live', 'dev', 'c', ?)",
    )
      .bind(now - 1000, now + 60_000)
      .run();
    const controller = createScheduledController({ scheduledTime: now, cron: "0 * * * *" });
    const ctx = createExecutionContext();
    await chat.scheduled!(controller, env as Env, ctx);
    await waitOnExecutionContext(ctx);
    const rows = await env.DB.prepare("SELECT ticket_hash FROM ws_tickets WHERE ticket_hash IN ('old','live')").all<{
      ticket_hash: string;
    }>();
    expect(rows.results.map((r) => r.ticket_hash)).toEqual(["live"]);
  });
});

describe("abandoned uploads", () => {
  it("are swept by the cron trigger: the row and any bytes go", async () => {
    const old = new Date(Date.now() - 2 * 3600_000).toISOString();
    const fresh = new Date().toISOString();
    await env.DB.prepare(
      `INSERT INTO attachments (id, tenant_id, conversation_id, name, type, size, status, r2_key, facts, created_at, updated_at) VALUES
       ('att_00000000000000000000000001', 'dev', 'c', 'gone.bin', 'x', 0, 'uploading', 'tenants/dev/attachments/att_00000000000000000000000001/blob', '{}', ?, ?),
       ('att_00000000000000000000000002', 'dev', 'c', 'inflight.bin', 'x', 0, 'uploading', 'tenants/dev/attachments/att_00000000000000000000000002/blob', '{}', ?, ?)`,
    )
      .bind(old, old, fresh, fresh)
      .run();
    await env.BUCKET.put("tenants/dev/attachments/att_00000000000000000000000001/blob", "partial");
    const ctx = createExecutionContext();
    await chat.scheduled!(createScheduledController({ scheduledTime: Date.now() }), env as Env, ctx);
    await waitOnExecutionContext(ctx);
    const rows = await env.DB.prepare(`SELECT id FROM attachments WHERE id LIKE 'att_0000000000000000000000000%'`).all<{
      id: string;
    }>();
    expect(rows.results.map((r) => r.id)).toEqual(["att_00000000000000000000000002"]);
    expect(await env.BUCKET.head("tenants/dev/attachments/att_00000000000000000000000001/blob")).toBeNull();
  });
});
