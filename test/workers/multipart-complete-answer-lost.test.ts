// A multipart complete whose parts R2 joined although its answer was lost (docs/failure-model.md's
// "a write whose answer was lost"): the route answers 502 storage_error, "send the same complete
// again", and the same complete sent again gets R2's "no such upload" (10024), the upload being
// complete. The object under the file's key is that upload's, so the retry finishes the file: 201,
// the answer a complete gives, for a conversation's attachment and a project's file. The same
// complete sent twice at once finishes one file, answered to both and never purged by the one that
// finds it ready. A complete whose upload is gone with nothing joined is the upload's 404.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { attachmentBlobKey, tenantPrefix } from "../../r2-layout";
import { app } from "../../workers/chat/app";
import { api, createConversation, eventually, newTenantWithId, r2KeysUnder, textOf, transcript } from "./helpers";

const R2_INTERNAL = "completeMultipartUpload: We encountered an internal error. (10001)";

/** The app's bucket with every resumed upload's complete run through `complete` (given the real one). */
function completesThrough(complete: (real: () => Promise<R2Object>) => Promise<R2Object>): R2Bucket {
  return new Proxy(env.BUCKET, {
    get(bucket, prop) {
      const value: unknown = Reflect.get(bucket, prop);
      if (prop !== "resumeMultipartUpload") return typeof value === "function" ? value.bind(bucket) : value;
      return (key: string, uploadId: string) =>
        new Proxy(bucket.resumeMultipartUpload(key, uploadId), {
          get(upload, p) {
            const v: unknown = Reflect.get(upload, p);
            if (p === "complete") return (parts: R2UploadedPart[]) => complete(() => upload.complete(parts));
            return typeof v === "function" ? v.bind(upload) : v;
          },
        });
    },
  });
}

/** R2 joins the parts, then its answer is lost (the error R2 answers when it fails inside). */
const answerLost = completesThrough(async (real) => {
  await real();
  throw new Error(R2_INTERNAL);
});

/** One JSON POST through the app with `bucket` in place of the real one. */
async function postThrough(bucket: R2Bucket, req: { path: string; key: string; body: unknown }) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${req.path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${req.key}`, "content-type": "application/json" },
      body: JSON.stringify(req.body),
    }),
    { ...env, BUCKET: bucket },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text };
}

const putPart = (key: string, at: string, body: string) =>
  api("PUT", `${at}/parts/1`, body, { key, raw: true, headers: { "content-type": "application/octet-stream" } });

/** A conversation with one open upload of one part: its path, the part and the file's id. */
async function conversationUpload() {
  const { tenantId, key } = await newTenantWithId();
  const id = await createConversation(undefined, key);
  const s = await api(
    "POST",
    `/v1/conversations/${id}/attachments/uploads`,
    { name: "k.txt", type: "text/plain" },
    { key },
  );
  expect(s.status, s.text).toBe(201);
  const at = `/v1/conversations/${id}/attachments/uploads/${s.json.attachmentId}`;
  const part = await putPart(key, at, "one line\n");
  expect(part.status).toBe(200);
  return { tenantId, key, id, at, fileId: s.json.attachmentId as string, part: part.json };
}

/** A project with one open upload of one part. */
async function projectUpload() {
  const { tenantId, key } = await newTenantWithId();
  const p = await api("POST", "/v1/projects", { name: "Big files" }, { key });
  expect(p.status).toBe(201);
  const projectId = p.json.id as string;
  const s = await api(
    "POST",
    `/v1/projects/${projectId}/files/uploads`,
    { name: "k.txt", type: "text/plain" },
    { key },
  );
  expect(s.status, s.text).toBe(201);
  const at = `/v1/projects/${projectId}/files/uploads/${s.json.fileId}`;
  const part = await putPart(key, at, "one line\n");
  expect(part.status).toBe(200);
  return { tenantId, key, projectId, at, fileId: s.json.fileId as string, part: part.json };
}

const statusOf = async (fileId: string) =>
  (await env.DB.prepare("SELECT status FROM attachments WHERE id = ?").bind(fileId).first<{ status: string }>())
    ?.status ?? null;

/** How many of the conversation's messages carry the file's note (it names the file's id). */
const notesNaming = async (u: { id: string; key: string; fileId: string }) =>
  (await transcript(u.id, u.key)).filter((m) => textOf(m).includes(u.fileId)).length;

const expectStorageError = (first: { status: number; text: string }) => {
  expect(first.status, first.text).toBe(502);
  const error = JSON.parse(first.text).error;
  expect(error.type).toBe("storage_error");
  expect(error.message).toMatch(/send the same complete again/);
};

describe("a multipart complete whose parts R2 joined but whose answer was lost", () => {
  for (const attach of [true, false])
    it(`finishes the conversation's file when the same complete is sent again (attach: ${attach})`, async () => {
      const u = await conversationUpload();
      const body = { parts: [u.part], attach };
      expectStorageError(await postThrough(answerLost, { path: `${u.at}/complete`, key: u.key, body }));
      // The first complete left the row open, its parts joined under the file's key.
      expect(await statusOf(u.fileId)).toBe("uploading");
      expect(await env.BUCKET.head(attachmentBlobKey(u.tenantId, u.fileId))).not.toBeNull();

      const again = await api("POST", `${u.at}/complete`, body, { key: u.key });
      expect(again.status, again.text).toBe(201);
      expect(again.json).toMatchObject({
        id: u.fileId,
        name: "k.txt",
        status: "ready",
        size: 9,
        facts: { kind: "text", lines: 1 },
        note: expect.stringContaining(u.fileId),
      });
      expect(await statusOf(u.fileId)).toBe("ready");
      const listed = await api("GET", `/v1/conversations/${u.id}/attachments`, undefined, { key: u.key });
      expect(listed.json.data.map((a: { id: string }) => a.id)).toEqual([u.fileId]);
      const file = await api("GET", `/v1/conversations/${u.id}/attachments/${u.fileId}`, undefined, { key: u.key });
      expect(file.status).toBe(200);
      expect(await notesNaming(u)).toBe(attach ? 1 : 0);
      // Finished once: a third complete finds no open upload.
      const third = await api("POST", `${u.at}/complete`, body, { key: u.key });
      expect(third.status).toBe(404);
      expect(third.json.error).toEqual({ type: "not_found", message: "upload not found" });
    });

  it("finishes the project's file when the same complete is sent again", async () => {
    const u = await projectUpload();
    const body = { parts: [u.part] };
    expectStorageError(await postThrough(answerLost, { path: `${u.at}/complete`, key: u.key, body }));
    const again = await api("POST", `${u.at}/complete`, body, { key: u.key });
    expect(again.status, again.text).toBe(201);
    expect(again.json).toMatchObject({ id: u.fileId, name: "k.txt", size: 9, facts: { kind: "text", lines: 1 } });
    expect(await statusOf(u.fileId)).toBe("ready");
    const files = await api("GET", `/v1/projects/${u.projectId}/files`, undefined, { key: u.key });
    expect(files.json.data.map((f: { id: string }) => f.id)).toEqual([u.fileId]);
  });

  it("is still the conversation's 404, nothing left, when its delete lands before the retry's complete", async () => {
    const u = await conversationUpload();
    const body = { parts: [u.part] };
    expectStorageError(await postThrough(answerLost, { path: `${u.at}/complete`, key: u.key, body }));
    const deleteFirst = completesThrough(async (real) => {
      expect((await api("DELETE", `/v1/conversations/${u.id}`, undefined, { key: u.key })).status).toBe(204);
      return real();
    });
    const again = await postThrough(deleteFirst, { path: `${u.at}/complete`, key: u.key, body });
    expect(again.status, again.text).toBe(404);
    expect(JSON.parse(again.text).error).toEqual({ type: "not_found", message: "conversation not found" });
    const rows = await env.DB.prepare("SELECT id FROM attachments WHERE tenant_id = ?").bind(u.tenantId).all();
    expect(rows.results).toEqual([]);
    await eventually(async () => (await r2KeysUnder(`${tenantPrefix(u.tenantId)}attachments/`)).length === 0);
  });
});

describe("the same multipart complete sent twice at once", () => {
  it("answers both with the one file when the second's R2 complete comes after the first finished", async () => {
    const u = await conversationUpload();
    const body = { parts: [u.part] };
    let firstDone: (v: { status: number; text: string }) => void = () => {};
    const first = new Promise<{ status: number; text: string }>((resolve) => {
      firstDone = resolve;
    });
    // The second passed the route's check of its open upload; R2 joins the parts for the first.
    const afterFirst = completesThrough(async (real) => {
      await first;
      return real();
    });
    const second = postThrough(afterFirst, { path: `${u.at}/complete`, key: u.key, body });
    await new Promise((r) => setTimeout(r, 50));
    const a = await api("POST", `${u.at}/complete`, body, { key: u.key });
    firstDone({ status: a.status, text: a.text });
    const b = await second;
    expect(a.status, a.text).toBe(201);
    // The file the first answered 201 for, its note in the conversation, is never purged by the second.
    expect(await statusOf(u.fileId), b.text).toBe("ready");
    expect(await env.BUCKET.head(attachmentBlobKey(u.tenantId, u.fileId))).not.toBeNull();
    expect(await notesNaming(u)).toBe(1);
    expect(b.status, b.text).toBe(201);
    expect(JSON.parse(b.text)).toEqual(JSON.parse(a.text));
  });

  it("answers both with the one file, noted once, however their finishes interleave", async () => {
    for (let i = 0; i < 3; i++) {
      const u = await conversationUpload();
      const body = { parts: [u.part] };
      const [a, b] = await Promise.all([1, 2].map(() => api("POST", `${u.at}/complete`, body, { key: u.key })));
      expect(await statusOf(u.fileId), `${a.text} ${b.text}`).toBe("ready");
      expect(await env.BUCKET.head(attachmentBlobKey(u.tenantId, u.fileId))).not.toBeNull();
      expect(await notesNaming(u)).toBe(1);
      expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([201, 201]);
      expect(b.json).toEqual(a.json);
    }
  });

  it("keeps the project's one file, answered to both", async () => {
    const u = await projectUpload();
    const body = { parts: [u.part] };
    const [a, b] = await Promise.all([1, 2].map(() => api("POST", `${u.at}/complete`, body, { key: u.key })));
    const files = await api("GET", `/v1/projects/${u.projectId}/files`, undefined, { key: u.key });
    expect(
      files.json.data.map((f: { id: string }) => f.id),
      `${a.text} ${b.text}`,
    ).toEqual([u.fileId]);
    expect(await env.BUCKET.head(attachmentBlobKey(u.tenantId, u.fileId))).not.toBeNull();
    expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([201, 201]);
    expect(b.json).toEqual(a.json);
  });
});

describe("a multipart complete whose R2 upload is gone with nothing joined", () => {
  it("is the upload's 404 for a conversation's file and for a project's, the row left to its sweep", async () => {
    for (const u of [await conversationUpload(), await projectUpload()]) {
      const row = await env.DB.prepare("SELECT r2_key, upload_id FROM attachments WHERE id = ?")
        .bind(u.fileId)
        .first<{ r2_key: string; upload_id: string }>();
      // R2 no longer has the upload (expired by its lifecycle rule, or aborted by a sweep cut short).
      await env.BUCKET.resumeMultipartUpload(row!.r2_key, row!.upload_id).abort();
      const done = await api("POST", `${u.at}/complete`, { parts: [u.part] }, { key: u.key });
      expect(done.status, done.text).toBe(404);
      expect(done.json.error).toEqual({ type: "not_found", message: "upload not found" });
      expect(await env.BUCKET.head(attachmentBlobKey(u.tenantId, u.fileId))).toBeNull();
      expect(await statusOf(u.fileId)).toBe("uploading");
    }
  });
});
