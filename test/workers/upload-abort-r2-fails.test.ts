// An open multipart upload whose R2 abort fails: nothing forgets it. The abort route answers an
// error and keeps the row naming the upload (a repeat aborts it and answers 204), the abandoned-
// upload sweep keeps its claimed row for the next tick, and a project's or a conversation's delete
// stops short with the row kept, for its repeat (the project's) or its alarm (the conversation's).
// Only R2's "no such upload" (10024: aborted already, completed, expired) counts as aborted.
import { createExecutionContext, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { attachmentBlobKey } from "../../r2-layout";
import { insertAttachment, SWEEP_CLAIM } from "../../services/attachments/store";
import { app } from "../../workers/chat/app";
import { newRow } from "../../workers/chat/routes/attachments";
import { sweepAbandonedUploads } from "../../workers/chat/scheduled";
import { api, createConversation, inConversation, newTenantWithId } from "./helpers";

const R2_INTERNAL = "abortMultipartUpload: We encountered an internal error. Please try again. (10001)";
const R2_NO_SUCH_UPLOAD = "abortMultipartUpload: The specified multipart upload does not exist. (10024)";

/** The bucket whose resumed uploads' abort throws `failure` while `on()` says so. */
function abortFailing(bucket: R2Bucket, { failure, on }: { failure: string; on: () => boolean }): R2Bucket {
  return new Proxy(bucket, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (prop !== "resumeMultipartUpload") return typeof value === "function" ? value.bind(target) : value;
      return (key: string, uploadId: string) =>
        new Proxy(target.resumeMultipartUpload(key, uploadId), {
          get(upload, p) {
            const v = Reflect.get(upload, p);
            if (typeof v !== "function") return v;
            if (p !== "abort") return v.bind(upload);
            return async () => {
              if (on()) throw new Error(failure);
              return upload.abort();
            };
          },
        });
    },
  });
}

const always = () => true;

async function through(bucket: R2Bucket, { key, method, path }: { key: string; method: string; path: string }) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, { method, headers: { authorization: `Bearer ${key}` } }),
    { ...(env as Env), BUCKET: bucket },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text };
}

const putPart = (key: string, at: string, n: number, body: string) =>
  api("PUT", `${at}/parts/${n}`, body, { key, raw: true, headers: { "content-type": "application/octet-stream" } });

const rowOf = (id: string) =>
  env.DB.prepare("SELECT status, upload_id, updated_at FROM attachments WHERE id = ?")
    .bind(id)
    .first<{ status: string; upload_id: string | null; updated_at: string }>();

/** Whether R2 still takes parts of the upload (it is open), by sending it one. */
const stillOpen = (r2Key: string, uploadId: string) =>
  env.BUCKET.resumeMultipartUpload(r2Key, uploadId)
    .uploadPart(9, "probe")
    .then(
      () => true,
      () => false,
    );

/** A conversation's upload started with one part: its path, row id, key and upload id. */
async function conversationUpload(key: string) {
  const id = await createConversation(undefined, key);
  const s = await api("POST", `/v1/conversations/${id}/attachments/uploads`, { name: "a.txt" }, { key });
  expect(s.status, s.text).toBe(201);
  const at = `/v1/conversations/${id}/attachments/uploads/${s.json.attachmentId}`;
  expect((await putPart(key, at, 1, "a part\n")).status).toBe(200);
  return { conversationId: id, at, fileId: s.json.attachmentId as string, uploadId: s.json.uploadId as string };
}

async function projectUpload(key: string) {
  const p = await api("POST", "/v1/projects", { name: "P" }, { key });
  expect(p.status).toBe(201);
  const projectId = p.json.id as string;
  const s = await api("POST", `/v1/projects/${projectId}/files/uploads`, { name: "a.txt" }, { key });
  expect(s.status, s.text).toBe(201);
  const at = `/v1/projects/${projectId}/files/uploads/${s.json.fileId}`;
  expect((await putPart(key, at, 1, "a part\n")).status).toBe(200);
  return { projectId, at, fileId: s.json.fileId as string, uploadId: s.json.uploadId as string };
}

describe("an upload's abort when R2's abort fails", () => {
  it("answers an error and keeps the row; the abort sent again aborts it (a conversation's)", async () => {
    const { tenantId, key } = await newTenantWithId();
    const { at, fileId, uploadId } = await conversationUpload(key);
    const failed = await through(abortFailing(env.BUCKET, { failure: R2_INTERNAL, on: always }), {
      key,
      method: "DELETE",
      path: at,
    });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    expect(await rowOf(fileId)).toMatchObject({ status: "uploading", upload_id: uploadId });
    const r2Key = attachmentBlobKey(tenantId, fileId);
    expect(await stillOpen(r2Key, uploadId)).toBe(true);
    // R2 is back: the same abort completes it.
    expect((await api("DELETE", at, undefined, { key })).status).toBe(204);
    expect(await rowOf(fileId)).toBeNull();
    expect(await stillOpen(r2Key, uploadId)).toBe(false);
    expect((await api("DELETE", at, undefined, { key })).status).toBe(404);
  });

  it("answers an error and keeps the row; the abort sent again aborts it (a project file's)", async () => {
    const { tenantId, key } = await newTenantWithId();
    const { at, fileId, uploadId } = await projectUpload(key);
    const failed = await through(abortFailing(env.BUCKET, { failure: R2_INTERNAL, on: always }), {
      key,
      method: "DELETE",
      path: at,
    });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    expect(await rowOf(fileId)).toMatchObject({ status: "uploading", upload_id: uploadId });
    const r2Key = attachmentBlobKey(tenantId, fileId);
    expect(await stillOpen(r2Key, uploadId)).toBe(true);
    expect((await api("DELETE", at, undefined, { key })).status).toBe(204);
    expect(await rowOf(fileId)).toBeNull();
    expect(await stillOpen(r2Key, uploadId)).toBe(false);
  });

  it("takes R2's 'no such upload' as the upload already gone: 204, the row removed", async () => {
    const { tenantId, key } = await newTenantWithId();
    const { at, fileId, uploadId } = await conversationUpload(key);
    // Gone from R2 already (an earlier abort whose answer was lost, or R2's own expiry).
    await env.BUCKET.resumeMultipartUpload(attachmentBlobKey(tenantId, fileId), uploadId).abort();
    const r = await through(abortFailing(env.BUCKET, { failure: R2_NO_SUCH_UPLOAD, on: always }), {
      key,
      method: "DELETE",
      path: at,
    });
    expect(r.status, r.text).toBe(204);
    expect(await rowOf(fileId)).toBeNull();
  });
});

describe("the abandoned-upload sweep when R2's abort fails", () => {
  it("keeps the claimed row for the next tick, which aborts the upload and removes the row", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conversationId = await createConversation(undefined, key);
    const row = newRow({ tenantId, conversationId, name: "left.bin", type: "text/plain", status: "uploading" });
    const upload = await env.BUCKET.createMultipartUpload(row.r2Key);
    await upload.uploadPart(1, "a part");
    const old = new Date(Date.now() - 8 * 24 * 60 * 60_000).toISOString();
    await insertAttachment(env.DB, { ...row, uploadId: upload.uploadId, createdAt: old, updatedAt: old });
    const failing = Object.create(env, {
      BUCKET: { value: abortFailing(env.BUCKET, { failure: R2_INTERNAL, on: always }) },
    }) as Env;
    await sweepAbandonedUploads(failing, Date.now());
    expect(await rowOf(row.id)).toMatchObject({
      status: "uploading",
      upload_id: upload.uploadId,
      updated_at: SWEEP_CLAIM,
    });
    expect(await stillOpen(row.r2Key, upload.uploadId)).toBe(true);
    await sweepAbandonedUploads(env, Date.now());
    expect(await rowOf(row.id)).toBeNull();
    expect(await stillOpen(row.r2Key, upload.uploadId)).toBe(false);
  });
});

describe("an owner's delete when R2's abort of its upload fails", () => {
  it("a project's: an error with the project and the upload's row kept; the DELETE sent again removes both", async () => {
    const { tenantId, key } = await newTenantWithId();
    const { projectId, fileId, uploadId } = await projectUpload(key);
    const failed = await through(abortFailing(env.BUCKET, { failure: R2_INTERNAL, on: always }), {
      key,
      method: "DELETE",
      path: `/v1/projects/${projectId}`,
    });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    expect(await rowOf(fileId)).toMatchObject({ status: "uploading", upload_id: uploadId });
    expect(await stillOpen(attachmentBlobKey(tenantId, fileId), uploadId)).toBe(true);
    expect((await api("DELETE", `/v1/projects/${projectId}`, undefined, { key })).status).toBe(204);
    expect(await rowOf(fileId)).toBeNull();
    expect(await stillOpen(attachmentBlobKey(tenantId, fileId), uploadId)).toBe(false);
    expect((await api("GET", `/v1/projects/${projectId}`, undefined, { key })).status).toBe(404);
  });

  it("a conversation's: stops short with the upload's row kept, and its alarm completes it", async () => {
    const { tenantId, key } = await newTenantWithId();
    const { conversationId, fileId, uploadId } = await conversationUpload(key);
    let failing = true;
    // Spread, not a prototype: the purge finds the cortex shards among the env's own keys.
    await inConversation(conversationId, (instance) => {
      const BUCKET = abortFailing(instance.env.BUCKET, { failure: R2_INTERNAL, on: () => failing });
      Object.defineProperty(instance, "env", {
        value: { ...instance.env, BUCKET },
        configurable: true,
        writable: true,
      });
    });
    const failed = await api("DELETE", `/v1/conversations/${conversationId}`, undefined, { key });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    expect(await rowOf(fileId)).toMatchObject({ status: "uploading", upload_id: uploadId });
    expect(await stillOpen(attachmentBlobKey(tenantId, fileId), uploadId)).toBe(true);
    failing = false;
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(conversationId));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowOf(fileId)).toBeNull();
    expect(await stillOpen(attachmentBlobKey(tenantId, fileId), uploadId)).toBe(false);
    expect((await api("GET", `/v1/conversations/${conversationId}`, undefined, { key })).status).toBe(404);
  });
});
