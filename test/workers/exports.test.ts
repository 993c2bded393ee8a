// /v1/exports inside workerd: the job runs on the export queue's consumer (not in the request),
// writes every conversation of the tenant into one R2 object, and only its tenant sees it.
import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../workers/chat/index";
import { api, eventually, newTenant, send } from "./helpers";

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
    const file = await api("GET", done.download, undefined, { key });
    expect(file.status).toBe(200);
    expect(Number(file.headers.get("content-length"))).toBe(done.bytes);
    const lines = file.text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === "conversation").map((l) => l.id).sort()).toEqual([...ids].sort());
    for (const word of ["alpha", "beta", "gamma"]) expect(lines.some((l) => !l.type && JSON.stringify(l.content).includes(`${word}-word`))).toBe(true);
    // Another tenant: the job and its file answer like ones that never existed.
    const other = await newTenant();
    const ghost = "exp_00000000000000000000000000";
    for (const path of [`/v1/exports/${started.json.id}`, done.download]) {
      const theirs = await api("GET", path, undefined, { key: other });
      expect(theirs.status).toBe(404);
      expect(theirs.text).toBe((await api("GET", path.replace(started.json.id, ghost), undefined, { key: other })).text);
    }
  }, 60_000);

  it("writes an export of several equal multipart parts (over 10 MiB) that downloads byte for byte", async () => {
    const key = await newTenant();
    // Lines of uneven sizes, so the JSONL pieces never line up with the part size.
    const sizes = [700_001, 333_333, 1_234_567, 99_999];
    const messages = Array.from({ length: 16 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `part ${i} ${String.fromCharCode(97 + (i % 26)).repeat(sizes[i % sizes.length])}` }));
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) {
      const r = await api("POST", `/v1/conversations/import?title=big-${n}`, JSON.stringify({ messages }), { key, raw: true, headers: { "content-type": "application/json" } });
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
    const file = await api("GET", done.download, undefined, { key });
    expect(file.status).toBe(200);
    expect(Number(file.headers.get("content-length"))).toBe(done.bytes);
    // The object is each conversation's own JSONL export, one after the other, with nothing lost or moved.
    const order = file.text
      .split("\n")
      .filter((l) => l.startsWith('{"type":"conversation"'))
      .map((l) => JSON.parse(l).id);
    expect([...order].sort()).toEqual([...ids].sort());
    let expected = "";
    for (const id of order) expected += (await api("GET", `/v1/conversations/${id}/export?format=jsonl`, undefined, { key })).text;
    // Only the moment of export differs.
    const stamp = /"exportedAt":"[^"]+"/g;
    expect(file.text.length).toBe(expected.length);
    expect(file.text.replace(stamp, "") === expected.replace(stamp, "")).toBe(true);
  }, 120_000);

  it("marks a job the queue gave up on as failed", async () => {
    const key = await newTenant();
    // A job that had not finished when the queue dead-lettered it: put one back in the running state, then deliver it to the DLQ consumer.
    const queued = (await api("POST", "/v1/exports", undefined, { key })).json;
    const tenantId = (await env.BUCKET.list({ prefix: "tenants/", include: [] })).objects.map((o) => o.key).find((k) => k.includes(`/exports/${queued.id}/`))!.split("/")[1];
    await eventually(async () => (await api("GET", `/v1/exports/${queued.id}`, undefined, { key })).json.status === "done", 20_000);
    await env.BUCKET.put(`tenants/${tenantId}/exports/${queued.id}/job.json`, JSON.stringify({ ...queued, status: "running" }));
    const batch = createMessageBatch("context-chat-exports-dlq", [{ id: "m1", timestamp: new Date(), attempts: 3, body: { kind: "export", tenantId, exportId: queued.id } }]);
    await (worker.queue as (b: MessageBatch<unknown>, e: Env) => Promise<void>)(batch, env);
    const failed = (await api("GET", `/v1/exports/${queued.id}`, undefined, { key })).json;
    expect(failed).toMatchObject({ status: "failed", download: null, error: expect.stringMatching(/failed after retries/) });
  }, 60_000);
});
