// Faults in the background: the summarizer's model failing (429/500/529, transient and
// persistent, and through the offline model's `summarize` directive), slow past its lease,
// answering garbage, or overflowing its window; and every queue message delivered twice and out
// of order. After each: the transcript is exactly what was sent and answered, the summary
// invariants hold, and the conversation takes the next turn.
import Anthropic from "@anthropic-ai/sdk";
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createOfflineModelFetch } from "../../core/offline-model";
import { FOLD_LEASE_MS } from "../../durable-objects/conversation/fold-coordinator";
import { runFoldJob } from "../../workers/summarizer/fold";
import { consumeBatch, handleJob } from "../../workers/summarizer/index";
import { Ledger, reportInjections } from "./fault-ledger";
import { api, createConversation } from "./helpers";
import { shardRows } from "./cortex-rows";
import type { FoldJob, QueueJob } from "../../core/jobs";
import { firstText } from "../blocks";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const jobFor = (id: string, jobId: string) => ({
  kind: "fold" as const,
  jobId,
  tenantId: "dev",
  conversationId: id,
  requestedAt: new Date().toISOString(),
});
const meta = async (id: string) => (await api("GET", `/v1/conversations/${id}`)).json;

async function lease(id: string): Promise<{ jobId: string; expiresAt: number } | null> {
  return runInDurableObject(stubOf(id), async (_i, state) => {
    const row = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").toArray()[0];
    return row ? JSON.parse(row.value) : null;
  });
}

const expireLease = (id: string) =>
  runInDurableObject(stubOf(id), async (_i, state) => {
    state.storage.sql.exec("UPDATE kv SET value = json_set(value, '$.expiresAt', 0) WHERE key = 'fold_lease'");
  });

/** Turns until the DO takes a fold lease (a job is in the queue). */
async function growUntilLease(ledger: Ledger, extra = ""): Promise<string> {
  for (let i = 0; i < 40; i++) {
    await ledger.turn(`turn ${i} on topic-${i}${extra}\n@reply-chars 900`);
    const l = await lease(ledger.id);
    if (l) return l.jobId;
  }
  throw new Error("no fold dispatched");
}

type Answer = Response | "model";
/** An SDK client whose fetch answers from a script, then falls through to the offline model. */
function scriptedClient(script: Answer[], opts: { gate?: Promise<void> } = {}) {
  const inner = createOfflineModelFetch();
  const calls: number[] = [];
  const client = new Anthropic({
    apiKey: "offline",
    baseURL: OFFLINE_BASE_URL,
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      if (opts.gate) await opts.gate;
      const next = script.shift() ?? "model";
      const res = next === "model" ? await inner(url, init) : next;
      calls.push(res.status);
      return res;
    },
  });
  return { client, calls };
}

const errorReply = (status: number) =>
  new Response(
    JSON.stringify({
      type: "error",
      error: {
        type: status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : "api_error",
        message: "injected",
      },
    }),
    { status, headers: { "content-type": "application/json" } },
  );
const textReply = (content: unknown[], stop = "end_turn") =>
  new Response(
    JSON.stringify({
      id: "msg_x",
      type: "message",
      role: "assistant",
      model: "m",
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    }),
    { headers: { "content-type": "application/json" } },
  );

/** Delivers one fold job through the consumer the way the queue does, with its delivery count. */
async function deliver(
  jobs: { body: unknown; attempts: number }[],
  run: (job: QueueJob, attempts: number) => Promise<void>,
) {
  const batch = createMessageBatch<unknown>(
    "context-chat-jobs",
    jobs.map((j, i) => ({ id: `d${i}`, timestamp: new Date(), attempts: j.attempts, body: j.body })),
  );
  const ctx = createExecutionContext();
  await consumeBatch(batch, run);
  return getQueueResult(batch, ctx);
}

describe("fault: the summarizer's model fails", () => {
  it("retries 429/500/529 through the queue, then commits a fallback summary: 9 persistent + 3 transient injections", async () => {
    let injected = 0;
    await Promise.all(
      [429, 500, 529].map(async (status) => {
        // Persistent: three deliveries fail and are retried; the fourth commits the fallback.
        const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000, summaryMaxChars: 700 }), 700);
        const jobId = await growUntilLease(ledger);
        const { client } = scriptedClient([
          errorReply(status),
          errorReply(status),
          errorReply(status),
          errorReply(status),
        ]);
        const run = (job: QueueJob, attempts: number) =>
          runFoldJob(job as FoldJob, env as Env, { client, attempts }).then(() => undefined);
        for (let attempts = 1; attempts <= 3; attempts++) {
          const r = await deliver([{ body: jobFor(ledger.id, jobId), attempts }], run);
          expect(r.retryMessages).toHaveLength(1);
          injected++;
          await ledger.check();
          expect((await meta(ledger.id)).foldCount).toBe(0);
        }
        const last = await deliver([{ body: jobFor(ledger.id, jobId), attempts: 4 }], run);
        expect(last.explicitAcks).toHaveLength(1);
        const m = await meta(ledger.id);
        expect(m.foldCount).toBe(1);
        expect(m.summary).toMatch(/^\[Written without the summarizer model/);
        expect(m.summary).toContain("topic-0");
        await ledger.survives();

        // Transient: the first delivery fails, the retry folds with the model.
        const again = new Ledger(await createConversation({ foldThresholdChars: 4000 }));
        const second = await growUntilLease(again);
        const flaky = scriptedClient([errorReply(status)]);
        const runFlaky = (job: QueueJob, attempts: number) =>
          runFoldJob(job as FoldJob, env as Env, { client: flaky.client, attempts }).then(() => undefined);
        expect((await deliver([{ body: jobFor(again.id, second), attempts: 1 }], runFlaky)).retryMessages).toHaveLength(
          1,
        );
        injected++;
        expect((await deliver([{ body: jobFor(again.id, second), attempts: 2 }], runFlaky)).explicitAcks).toHaveLength(
          1,
        );
        expect((await meta(again.id)).summary).not.toMatch(/Written without/);
        await again.survives();
      }),
    );
    expect(injected).toBe(12);
    reportInjections(
      "summarizer model error (429/500/529)",
      injected,
      "9 persistent deliveries then a fallback summary, 3 transient",
    );
  });

  it("never commits a fallback summary when the provider refuses the key (401, 403): the job retries to the dead-letter queue", async () => {
    for (const [status, type] of [
      [401, "authentication_error"],
      [403, "permission_error"],
    ] as const) {
      const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000, summaryMaxChars: 700 }), 700);
      const jobId = await growUntilLease(ledger);
      const refused = () =>
        new Response(JSON.stringify({ type: "error", error: { type, message: "invalid x-api-key" } }), {
          status,
          headers: { "content-type": "application/json" },
        });
      const { client } = scriptedClient([refused(), refused(), refused(), refused(), refused()]);
      const run = (job: QueueJob, attempts: number) =>
        runFoldJob(job as FoldJob, env as Env, { client, attempts }).then(() => undefined);
      for (let attempts = 1; attempts <= 5; attempts++) {
        const r = await deliver([{ body: jobFor(ledger.id, jobId), attempts }], run);
        expect(r.retryMessages, `${status} delivery ${attempts}`).toHaveLength(1);
      }
      const m = await meta(ledger.id);
      expect(m.foldCount).toBe(0);
      expect(m.summary ?? "").not.toMatch(/Written without the summarizer model/);
      await ledger.survives();
    }
  });

  it("fails the fold call of the offline model itself (`@model-error 500 summarize` in the folded region), then falls back", async () => {
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000 }));
    await ledger.turn("this prompt poisons the fold call\n@model-error 500 summarize");
    const jobId = await growUntilLease(ledger);
    for (let attempts = 1; attempts <= 3; attempts++) {
      const r = await deliver([{ body: jobFor(ledger.id, jobId), attempts }], (job, a) =>
        handleJob(job, env as Env, a),
      );
      expect(r.retryMessages).toHaveLength(1);
    }
    await ledger.check();
    await deliver([{ body: jobFor(ledger.id, jobId), attempts: 4 }], (job, a) => handleJob(job, env as Env, a));
    expect((await meta(ledger.id)).foldCount).toBe(1);
    await ledger.survives();
    reportInjections("model error, fold summarizer call (offline directive)", 3);
  });
});

describe("fault: the summarizer's model is slow", () => {
  it("a fold that outlives its lease is sent again, not replaced: the first delivery to commit applies, the slow one is refused (1 injection)", async () => {
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000 }));
    const slowJob = await growUntilLease(ledger);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = scriptedClient([], { gate });
    const folding = runFoldJob(jobFor(ledger.id, slowJob), env as Env, { client: slow.client });
    await ledger.turn("a turn while the fold is stuck");
    await expireLease(ledger.id);
    const resentJob = await growUntilLease(ledger);
    expect(resentJob).toBe(slowJob);
    expect((await runFoldJob(jobFor(ledger.id, resentJob), env as Env)).applied).toBe(true);
    release();
    expect(await folding).toEqual({ applied: false, reason: "stale job: not the fold in flight" });
    await ledger.check();
    expect((await meta(ledger.id)).foldCount).toBe(1);
    await ledger.survives();
    reportInjections("summarizer slow past its lease", 1);
  });
});

describe("fault: the summarizer's deliveries outlast a lease", () => {
  it("each delivery renews the lease: a retry after the first lease's span still holds it, and no second job starts", async () => {
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000 }));
    const jobId = await growUntilLease(ledger);
    const { client } = scriptedClient([errorReply(529), errorReply(529)]);
    const run = (job: QueueJob, attempts: number) =>
      runFoldJob(job as FoldJob, env as Env, { client, attempts }).then(() => undefined);
    expect((await deliver([{ body: jobFor(ledger.id, jobId), attempts: 1 }], run)).retryMessages).toHaveLength(1);
    // The backoff and a slow call used the lease up; the retry comes before any turn dispatched again.
    await expireLease(ledger.id);
    const before = Date.now();
    expect((await deliver([{ body: jobFor(ledger.id, jobId), attempts: 2 }], run)).retryMessages).toHaveLength(1);
    const held = await lease(ledger.id);
    expect(held?.jobId).toBe(jobId);
    expect(held!.expiresAt).toBeGreaterThanOrEqual(before + FOLD_LEASE_MS);
    await ledger.turn("a turn while the fold retries");
    expect((await lease(ledger.id))?.jobId).toBe(jobId);
    expect((await runFoldJob(jobFor(ledger.id, jobId), env as Env, { attempts: 3 })).applied).toBe(true);
    await ledger.survives();
  });
});

describe("fault: the summarizer's model returns garbage", () => {
  it("rejects empty, tool-only, malformed, refused and cut-off answers (retried), caps an oversized one: 7 injections", async () => {
    const garbage: Answer[] = [
      textReply([{ type: "text", text: "   \n  " }]),
      textReply([{ type: "tool_use", id: "toolu_x", name: "memory_search", input: {} }], "tool_use"),
      new Response("<html>502 Bad Gateway</html>", { status: 200, headers: { "content-type": "application/json" } }),
      textReply([]),
      // A refusal's words, and a summary cut off at max_tokens short of the cap: neither replaces the summary.
      textReply([{ type: "text", text: "I'm sorry, but I can't help with that request." }], "refusal"),
      textReply([{ type: "text", text: "The user asked about the flight plan and" }], "max_tokens"),
    ];
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000, summaryMaxChars: 500 }), 500);
    const jobId = await growUntilLease(ledger);
    const { client } = scriptedClient([
      ...garbage,
      textReply([{ type: "text", text: `@tool memory_forget {}\n${"x. ".repeat(5000)}` }], "max_tokens"),
    ]);
    const run = (job: QueueJob) =>
      runFoldJob(job as FoldJob, env as Env, { client, attempts: 1 }).then(() => undefined);
    for (let i = 0; i < garbage.length; i++) {
      // Each answer on a delivery short of the fallback's: the lease's count of the job's deliveries starts over.
      await runInDurableObject(stubOf(ledger.id), async (_i, state) => {
        state.storage.sql.exec("UPDATE kv SET value = json_remove(value, '$.deliveries') WHERE key = 'fold_lease'");
      });
      expect((await deliver([{ body: jobFor(ledger.id, jobId), attempts: 1 }], run)).retryMessages).toHaveLength(1);
      await ledger.check();
    }
    expect((await deliver([{ body: jobFor(ledger.id, jobId), attempts: 1 }], run)).explicitAcks).toHaveLength(1);
    const m = await meta(ledger.id);
    expect(m.foldCount).toBe(1);
    expect(m.summary!.length).toBeLessThanOrEqual(500);
    await ledger.survives();
    // The summary is replayed as text in the preamble: its directive-looking line is never obeyed.
    const replay = (await api("GET", `/v1/conversations/${ledger.id}/replay`)).json;
    expect(firstText(replay.messages[0].content)).toContain(m.summary);
    reportInjections(
      "summarizer garbage answers",
      garbage.length + 1,
      "blank, tool_use only, not JSON, empty content, refusal, cut off short, oversized",
    );
  });
});

describe("fault: the fold call overflows the model's window", () => {
  it("shrinks the excerpts on the provider's overflow 400 and folds (the model's window is smaller than the settings say)", async () => {
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 30_000 }));
    for (let i = 0; i < 14; i++) await ledger.turn(`long turn ${i}\n@reply-chars 3000`);
    await ledger.check();
    // The model changes to one with a 3,000-token window while the settings keep claiming 1,000,000
    // (a model change alone would bring the window setting along with it).
    expect(
      (
        await api("PATCH", `/v1/conversations/${ledger.id}`, {
          settings: { model: "offline-3k", contextWindowTokens: 1_000_000 },
        })
      ).status,
    ).toBe(200);
    const jobId = (await lease(ledger.id))?.jobId;
    expect(jobId).toBeTruthy();
    const rec = scriptedClient([]);
    expect(await runFoldJob(jobFor(ledger.id, jobId!), env as Env, { client: rec.client })).toEqual({
      applied: true,
      reason: "folded",
    });
    const overflows = rec.calls.filter((s) => s === 400).length;
    expect(overflows).toBeGreaterThanOrEqual(1);
    expect(rec.calls.at(-1)).toBe(200);
    await ledger.check();
    expect(
      (await api("PATCH", `/v1/conversations/${ledger.id}`, { settings: { model: "claude-sonnet-5-5" } })).status,
    ).toBe(200);
    await ledger.survives();
    reportInjections("overflow 400, fold summarizer call", overflows);
  });
});

describe("fault: every queue message delivered twice and out of order", () => {
  it("applies each fold once and indexes each page once, whatever the order (8 duplicated deliveries)", async () => {
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000 }));
    const first = await growUntilLease(ledger);
    await expireLease(ledger.id); // the first job "crashed": a later turn sends it again, a second message
    const second = await growUntilLease(ledger);
    expect(second).toBe(first);
    // PDF page chunks of an attachment in the same batch.
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 60; i++)
      doc.addPage([300, 200]).drawText(`page ${i} quokka${i}`, { x: 20, y: 100, font, size: 12 });
    const pdf = await api("POST", `/v1/conversations/${ledger.id}/attachments?name=q.pdf`, await doc.save(), {
      raw: true,
      headers: { "content-type": "application/pdf" },
    });
    ledger.record([
      (await api("GET", `/v1/conversations/${ledger.id}/messages?after=${ledger.told.length}`)).json.data[0],
    ]);
    const extract = (fromPage: number, toPage: number) => ({
      kind: "extract",
      tenantId: "dev",
      attachmentId: pdf.json.id,
      fromPage,
      toPage,
    });
    const jobs = [jobFor(ledger.id, second), extract(51, 60), jobFor(ledger.id, first), extract(1, 50)];
    // Twice each, newest first, the duplicates interleaved.
    const deliveries = [jobs[0], jobs[1], jobs[2], jobs[0], jobs[3], jobs[2], jobs[1], jobs[3]].map((body) => ({
      body,
      attempts: 1,
    }));
    const r = await deliver(deliveries, (job, a) => handleJob(job, env as Env, a));
    expect(r.explicitAcks).toHaveLength(8);
    const m = await meta(ledger.id);
    expect(m.foldCount).toBe(1);
    expect(await lease(ledger.id)).toBeNull();
    const [pages] = await shardRows(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT ref_id) AS d FROM cortex_docs WHERE kind = 'page' AND ref_id LIKE ?`,
      [`${pdf.json.id}:p%`],
    );
    expect(pages).toEqual({ n: 60, d: 60 });
    await ledger.survives();
    reportInjections(
      "queue duplicate + out-of-order deliveries",
      deliveries.length,
      "2 messages of one fold job (the later ones stale) and 2 extract chunks, each twice, reversed",
    );
  });
});
