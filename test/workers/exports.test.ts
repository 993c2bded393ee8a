// /v1/exports inside workerd: the job runs on the export queue's consumer (not in the request),
// writes every conversation of the tenant into one R2 object, and only its tenant sees it; one
// job at a time per tenant, removed by DELETE or by the cron once its retention has passed.
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { runExportJob } from "../../workers/chat/export-runner";
import worker from "../../workers/chat/index";
import { api, eventually, newTenant, newTenantWithId, send } from "./helpers";

describe("tenant-wide export", () => {
  it("queues a job whose consumer writes every conversation into one downloadable object", async () => {
    const key = await newTenant();
    const ids: string[] = [];
    for (const word of ["alpha", "beta", "gamma"]) {
      const id = (await api("POST", "/v1/conversations", { title: `about ${word}` }, { key })).json.id;
      expect((await send(id, `remember ${word}-word`, key)).status).toBe(200);
      ids.push(id);
    }
    const started = await api("POST", "/v1/exports", undefined, { key });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ status: "queued", download: null });
    const done = await eventually(async () => {
      const r = await api("GET", `/v1/exports/${started.json.id}`, undefined, { key });
      return r.json.status === "done" ? r.json : null;
    }, 20_000);
    expect(done).toMatchObject({ conversations: 3, download: `/v1/exports/${started.json.id}/download` });
    const file = await api("GET", done.download!, undefined, { key });
    expect(file.status).toBe(200);
    expect(Number(file.headers.get("content-length"))).toBe(done.bytes);
    const lines = file.text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(
      lines
        .filter((l) => l.type === "conversation")
        .map((l) => l.id)
        .sort(),
    ).toEqual([...ids].sort());
    for (const word of ["alpha", "beta", "gamma"])
      expect(lines.some((l) => !l.type && JSON.stringify(l.content).includes(`${word}-word`))).toBe(true);
    // Another tenant: the job and its file answer like ones that never existed.
    const other = await newTenant();
    const ghost = "exp_00000000000000000000000000";
    for (const path of [`/v1/exports/${started.json.id}`, done.download!]) {
      const theirs = await api("GET", path, undefined, { key: other });
      expect(theirs.status).toBe(404);
      expect(theirs.text).toBe(
        (await api("GET", path.replace(started.json.id, ghost), undefined, { key: other })).text,
      );
    }
  }, 60_000);

  it("writes an export of several equal multipart parts (over 10 MiB) that downloads byte for byte", async () => {
    const key = await newTenant();
    // Lines of uneven sizes, so the JSONL pieces never line up with the part size.
    const sizes = [700_001, 333_333, 1_234_567, 99_999];
    const messages = Array.from({ length: 16 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `part ${i} ${String.fromCharCode(97 + (i % 26)).repeat(sizes[i % sizes.length])}`,
    }));
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) {
      const r = await api("POST", `/v1/conversations/import?title=big-${n}`, JSON.stringify({ messages }), {
        key,
        raw: true,
        headers: { "content-type": "application/json" },
      });
      expect(r.status, r.text.slice(0, 200)).toBe(201);
      ids.push(r.json.id);
    }
    const started = await api("POST", "/v1/exports", undefined, { key });
    const done = await eventually(async () => {
      const r = await api("GET", `/v1/exports/${started.json.id}`, undefined, { key });
      return r.json.status === "done" || r.json.status === "failed" ? r.json : null;
    }, 50_000);
    expect(done).toMatchObject({ status: "done", conversations: 2 });
    expect(done.bytes).toBeGreaterThan(10 * 1024 * 1024);
    const file = await api("GET", done.download!, undefined, { key });
    expect(file.status).toBe(200);
    expect(Number(file.headers.get("content-length"))).toBe(done.bytes);
    // The object is each conversation's own JSONL export, one after the other, with nothing lost or moved.
    const order = file.text
      .split("\n")
      .filter((l) => l.startsWith('{"type":"conversation"'))
      .map((l) => JSON.parse(l).id);
    expect([...order].sort()).toEqual([...ids].sort());
    let expected = "";
    for (const id of order)
      expected += (await api("GET", `/v1/conversations/${id}/export?format=jsonl`, undefined, { key })).text;
    // Only the moment of export differs.
    const stamp = /"exportedAt":"[^"]+"/g;
    expect(file.text.length).toBe(expected.length);
    expect(file.text.replace(stamp, "") === expected.replace(stamp, "")).toBe(true);
  }, 120_000);

  it("marks a job the queue gave up on as failed", async () => {
    const { key, tenantId } = await newTenantWithId();
    // A job that had not finished when the queue dead-lettered it: put one back in the running state, then deliver it to the DLQ consumer.
    const queued = (await api("POST", "/v1/exports", undefined, { key })).json;
    await eventually(
      async () => (await api("GET", `/v1/exports/${queued.id}`, undefined, { key })).json.status === "done",
      20_000,
    );
    await env.DB.prepare(`UPDATE export_jobs SET status = 'running' WHERE id = ?`).bind(queued.id).run();
    const batch = createMessageBatch("context-chat-exports-dlq", [
      { id: "m1", timestamp: new Date(), attempts: 3, body: { kind: "export", tenantId, exportId: queued.id } },
    ]);
    await (worker.queue as (b: MessageBatch<unknown>, e: Env) => Promise<void>)(batch, env);
    const failed = (await api("GET", `/v1/exports/${queued.id}`, undefined, { key })).json;
    expect(failed).toMatchObject({
      status: "failed",
      download: null,
      error: expect.stringMatching(/failed after retries/),
    });
  }, 60_000);

  it("deletes a job and its file: DELETE answers 204, then the job, its download and its objects are gone", async () => {
    const { key, tenantId } = await newTenantWithId();
    await api("POST", "/v1/conversations", { title: "to export" }, { key });
    const started = (await api("POST", "/v1/exports", undefined, { key })).json;
    await eventually(
      async () => (await api("GET", `/v1/exports/${started.id}`, undefined, { key })).json.status === "done",
      20_000,
    );
    expect(await objectsOf(tenantId, started.id)).toEqual([`tenants/${tenantId}/exports/${started.id}/export.jsonl`]);
    const removed = await api("DELETE", `/v1/exports/${started.id}`, undefined, { key });
    expect(removed.status, removed.text).toBe(204);
    for (const path of [`/v1/exports/${started.id}`, `/v1/exports/${started.id}/download`, `/v1/exports/${started.id}`])
      expect((await api("GET", path, undefined, { key })).status).toBe(404);
    expect((await api("DELETE", `/v1/exports/${started.id}`, undefined, { key })).status).toBe(404);
    expect(await objectsOf(tenantId, started.id)).toEqual([]);
    expect(await rowOf(started.id)).toBeNull();
  }, 60_000);

  it("leaves nothing when a job is deleted while it runs: the runner removes the file it finished", async () => {
    const { key, tenantId } = await newTenantWithId();
    await api("POST", "/v1/conversations", { title: "to export" }, { key });
    const job = (await call({ EXPORT_QUEUE: idleQueue }, "POST", "/v1/exports", key)).json;
    // The delete lands while the runner writes the file (before it records the job as done).
    const racing = new Proxy(env.BUCKET, {
      get: (bucket, prop) =>
        prop === "put"
          ? async (...args: Parameters<R2Bucket["put"]>) => {
              expect((await call({}, "DELETE", `/v1/exports/${job.id}`, key)).status).toBe(204);
              return bucket.put(...args);
            }
          : (Reflect.get(bucket, prop).bind?.(bucket) ?? Reflect.get(bucket, prop)),
    });
    await runExportJob({ ...env, BUCKET: racing } as Env, { kind: "export", tenantId, exportId: job.id });
    expect(await objectsOf(tenantId, job.id)).toEqual([]);
    expect(await rowOf(job.id)).toBeNull();
  }, 60_000);

  it("keeps the file when the queue delivers a job twice and both deliveries run: the second finds it done", async () => {
    const { key, tenantId } = await newTenantWithId();
    await api("POST", "/v1/conversations", { title: "to export" }, { key });
    const job = (await call({ EXPORT_QUEUE: idleQueue }, "POST", "/v1/exports", key)).json;
    // Both deliveries start while the job is running; the first records it done before the second finishes.
    let release!: () => void;
    const firstDone = new Promise<void>((resolve) => (release = resolve));
    const late = new Proxy(env.BUCKET, {
      get: (bucket, prop) =>
        prop === "put" || prop === "createMultipartUpload"
          ? async (...args: unknown[]) => {
              await firstDone;
              return (Reflect.get(bucket, prop) as (...a: unknown[]) => unknown).apply(bucket, args);
            }
          : (Reflect.get(bucket, prop).bind?.(bucket) ?? Reflect.get(bucket, prop)),
    });
    const second = runExportJob({ ...env, BUCKET: late } as Env, { kind: "export", tenantId, exportId: job.id });
    await runExportJob(env as Env, { kind: "export", tenantId, exportId: job.id });
    release();
    await second;
    expect(await objectsOf(tenantId, job.id)).toEqual([`tenants/${tenantId}/exports/${job.id}/export.jsonl`]);
    const download = await api("GET", `/v1/exports/${job.id}/download`, undefined, { key });
    expect(download.status).toBe(200);
  }, 60_000);

  it("keeps a job and its file for the retention after it finished, then the cron removes both", async () => {
    const { key, tenantId } = await newTenantWithId();
    await api("POST", "/v1/conversations", { title: "to export" }, { key });
    const started = (await api("POST", "/v1/exports", undefined, { key })).json;
    // Until it runs, the job expires the retention after its creation.
    expect(Date.parse(started.expiresAt) - Date.parse(started.createdAt)).toBe(7 * DAY);
    const done = await eventually(async () => {
      const r = (await api("GET", `/v1/exports/${started.id}`, undefined, { key })).json;
      return r.status === "done" ? r : null;
    }, 20_000);
    expect(Date.parse(done.expiresAt) - Date.parse(done.finishedAt!)).toBe(7 * DAY);
    const tick = async (at: number) => {
      const ctx = createExecutionContext();
      await worker.scheduled!(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), env, ctx);
      await waitOnExecutionContext(ctx);
    };
    await tick(Date.parse(done.expiresAt) - 1);
    expect((await api("GET", `/v1/exports/${started.id}`, undefined, { key })).json.status).toBe("done");
    expect(await objectsOf(tenantId, started.id)).toHaveLength(1);
    await tick(Date.parse(done.expiresAt));
    expect((await api("GET", `/v1/exports/${started.id}`, undefined, { key })).status).toBe(404);
    expect(await objectsOf(tenantId, started.id)).toEqual([]);
    expect(await rowOf(started.id)).toBeNull();
    // The retention is the deployment's to set, in days.
    const shorter = (await call({ EXPORT_QUEUE: idleQueue, EXPORT_RETENTION_DAYS: "0.5" }, "POST", "/v1/exports", key))
      .json;
    expect(Date.parse(shorter.expiresAt) - Date.parse(shorter.createdAt)).toBe(DAY / 2);
  }, 60_000);

  it("refuses an export while the tenant has one queued or running, naming the limit, and takes one again once it is deleted", async () => {
    const key = await newTenant();
    const first = await call({ EXPORT_QUEUE: idleQueue }, "POST", "/v1/exports", key);
    expect(first.status).toBe(202);
    const second = await call({ EXPORT_QUEUE: idleQueue }, "POST", "/v1/exports", key);
    expect(second.status).toBe(409);
    expect(second.json.error).toEqual({
      type: "conflict",
      message: `this tenant already has 1 export queued or running (${first.json.id}), the most it may have; wait for it to finish or delete it first`,
    });
    // Another tenant is not held back.
    expect((await call({ EXPORT_QUEUE: idleQueue }, "POST", "/v1/exports", await newTenant())).status).toBe(202);
    // Nothing was written for the refused one: the tenant still has the one job.
    expect(
      (await env.DB.prepare(
        `SELECT COUNT(*) AS n FROM export_jobs WHERE tenant_id = (SELECT tenant_id FROM export_jobs WHERE id = ?)`,
      )
        .bind(first.json.id)
        .first<{ n: number }>())!.n,
    ).toBe(1);
    expect((await call({}, "DELETE", `/v1/exports/${first.json.id}`, key)).status).toBe(204);
    expect((await call({ EXPORT_QUEUE: idleQueue }, "POST", "/v1/exports", key)).status).toBe(202);
  });
});

const DAY = 24 * 60 * 60_000;

/** A queue that takes messages and never delivers them: its jobs stay queued. */
const idleQueue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue;

/** The app with its real bindings but these overrides. */
async function call(overrides: Partial<Env>, method: string, path: string, key: string) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, { method, headers: { authorization: `Bearer ${key}` } }),
    { ...env, ...overrides } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function objectsOf(tenantId: string, exportId: string): Promise<string[]> {
  return (await env.BUCKET.list({ prefix: `tenants/${tenantId}/exports/${exportId}/` })).objects.map((o) => o.key);
}

const rowOf = (id: string) => env.DB.prepare(`SELECT status FROM export_jobs WHERE id = ?`).bind(id).first();
