// An export job whose retention ran out is a 404 from that moment (docs/api-notes.md, Retention),
// even when its queue message arrives only afterwards, or its run ends only afterwards: the late
// run neither brings the job back as done nor leaves a file for it in R2.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { runExportJob } from "../../workers/chat/export-runner";
import { api, newTenantWithId } from "./helpers";

/** A queue that takes messages and never delivers them: its jobs stay queued. */
const idleQueue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue;
/** About 0.86 s. */
const SHORT_RETENTION = { EXPORT_QUEUE: idleQueue, EXPORT_RETENTION_DAYS: "0.00001" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(overrides: Partial<Env>, req: { method: string; path: string; key: string }) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${req.path}`, { method: req.method, headers: { authorization: `Bearer ${req.key}` } }),
    { ...env, ...overrides } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const objectsOf = async (tenantId: string, exportId: string) =>
  (await env.BUCKET.list({ prefix: `tenants/${tenantId}/exports/${exportId}/` })).objects.map((o) => o.key);

/** A queued export of a tenant with one conversation, its retention about 0.86 s. */
async function shortLivedExport() {
  const { key, tenantId } = await newTenantWithId();
  expect((await api("POST", "/v1/conversations", { title: "to export" }, { key })).status).toBe(201);
  const started = await call(SHORT_RETENTION, { method: "POST", path: "/v1/exports", key });
  expect(started.status).toBe(202);
  return { key, tenantId, exportId: started.json.id as string };
}

describe("an export whose retention ran out", () => {
  it("stays a 404 when its queue message arrives late, and gets no file", async () => {
    const { key, tenantId, exportId } = await shortLivedExport();
    await sleep(1500);
    expect((await call({}, { method: "GET", path: `/v1/exports/${exportId}`, key })).status).toBe(404);
    await runExportJob({ ...env, ...SHORT_RETENTION } as Env, { kind: "export", tenantId, exportId });
    expect((await call({}, { method: "GET", path: `/v1/exports/${exportId}`, key })).status).toBe(404);
    expect(await objectsOf(tenantId, exportId)).toEqual([]);
  });

  it("stays a 404 when it ran out while the job was running, and its file goes", async () => {
    const { key, tenantId, exportId } = await shortLivedExport();
    // The run starts in time, and its file is written only after the retention has passed.
    const slow = new Proxy(env.BUCKET, {
      get: (bucket, prop) => {
        const value = Reflect.get(bucket, prop);
        if (prop !== "put" && prop !== "createMultipartUpload")
          return typeof value === "function" ? value.bind(bucket) : value;
        return async (...args: unknown[]) => {
          await sleep(1500);
          return (value as (...a: unknown[]) => Promise<unknown>).apply(bucket, args);
        };
      },
    });
    await runExportJob({ ...env, ...SHORT_RETENTION, BUCKET: slow } as Env, { kind: "export", tenantId, exportId });
    expect((await call({}, { method: "GET", path: `/v1/exports/${exportId}`, key })).status).toBe(404);
    expect(await objectsOf(tenantId, exportId)).toEqual([]);
  });
});
