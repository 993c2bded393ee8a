// A project file's routes racing the project's DELETE: each request has seen the project, then the
// delete lands at one R2 call or D1 read of it (forced by wrapping that binding), and the answer is
// the 404 a missing project gets (GET /v1/projects/:id's), with nothing of the file left in D1 or
// R2. The same routes sent after the delete get that 404 too.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantPrefix } from "../../r2-layout";
import { app } from "../../workers/chat/app";
import { watchedDb } from "./delete-faults";
import { api, newTenantWithId, r2KeysUnder } from "./helpers";

/** Where the delete lands: before or after the R2 call `method` of the racing request. */
type Landing = { method: "put" | "complete" | "uploadPart" | "abort"; when: "before" | "after" };

/** The app's bucket whose first call of `at.method` (the bucket's, or an upload's) runs `run` beside it. */
function bucketWhere(at: Landing & { run: () => Promise<void> }): R2Bucket {
  let done = false;
  const hooked = <T extends object>(target: T, prop: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, prop);
    if (typeof value !== "function") return value;
    if (prop !== at.method || done) return value.bind(target);
    return async (...args: unknown[]) => {
      done = true;
      if (at.when === "before") await at.run();
      const result: unknown = await value.apply(target, args);
      if (at.when === "after") await at.run();
      return result;
    };
  };
  return new Proxy(env.BUCKET, {
    get(bucket, prop) {
      if (prop !== "resumeMultipartUpload") return hooked(bucket, prop);
      return (key: string, uploadId: string) =>
        new Proxy(bucket.resumeMultipartUpload(key, uploadId), { get: (upload, p) => hooked(upload, p) });
    },
  });
}

/** One request through the app with `bindings` in place of the real ones. */
async function through(
  bindings: { BUCKET?: R2Bucket; DB?: D1Database },
  req: { method: string; path: string; key: string; body?: string; type?: string },
) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { authorization: `Bearer ${req.key}` };
  if (req.body !== undefined) {
    headers["content-type"] = req.type ?? "application/octet-stream";
    headers["content-length"] = String(new TextEncoder().encode(req.body).length);
  }
  const res = await app.fetch(
    new Request(`http://chat.test${req.path}`, { method: req.method, headers, body: req.body }),
    { ...env, ...bindings },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text, type: res.headers.get("content-type") };
}

const rowsOf = async (tenantId: string) =>
  (await env.DB.prepare("SELECT id FROM attachments WHERE tenant_id = ?").bind(tenantId).all()).results;

/** A project with one open upload of one part: the ids, the upload's path and the part. */
async function openUpload() {
  const { tenantId, key } = await newTenantWithId();
  const p = await api("POST", "/v1/projects", { name: "Doomed" }, { key });
  expect(p.status).toBe(201);
  const projectId = p.json.id as string;
  const s = await api("POST", `/v1/projects/${projectId}/files/uploads`, { name: "late.txt" }, { key });
  expect(s.status, s.text).toBe(201);
  const at = `/v1/projects/${projectId}/files/uploads/${s.json.fileId}`;
  const part = await api("PUT", `${at}/parts/1`, "too late\n", {
    key,
    raw: true,
    headers: { "content-type": "application/octet-stream" },
  });
  expect(part.status).toBe(200);
  return { tenantId, key, projectId, at, part: part.json as { partNumber: number; etag: string } };
}

/** The project's DELETE, as `run` of a landing: it must succeed, whatever the racing request does. */
const deleteOf = (projectId: string, key: string) => async () => {
  expect((await api("DELETE", `/v1/projects/${projectId}`, undefined, { key })).status).toBe(204);
};

/** The answer is a missing project's, word for word, and nothing of the tenant's files is left. */
async function expectGone(
  answer: { status: number; text: string; type: string | null },
  { tenantId, key, projectId }: { tenantId: string; key: string; projectId: string },
) {
  const missing = await api("GET", `/v1/projects/${projectId}`, undefined, { key });
  expect(missing.status).toBe(404);
  expect(answer.status, answer.text).toBe(404);
  expect(answer.type).toMatch(/^application\/json/);
  expect(JSON.parse(answer.text).error).toEqual(missing.json.error);
  expect(JSON.parse(answer.text).error.message).toBe("project not found");
  expect(await rowsOf(tenantId)).toEqual([]);
  expect(await r2KeysUnder(tenantPrefix(tenantId))).toEqual([]);
}

describe("a project file's multipart complete racing the project's delete", () => {
  it.each(["before", "after"] as const)(
    "is a 404 naming the project when the delete lands %s R2 joins the parts",
    async (when) => {
      const u = await openUpload();
      const bucket = bucketWhere({ method: "complete", when, run: deleteOf(u.projectId, u.key) });
      const done = await through(
        { BUCKET: bucket },
        {
          method: "POST",
          path: `${u.at}/complete`,
          key: u.key,
          body: JSON.stringify({ parts: [u.part] }),
          type: "application/json",
        },
      );
      await expectGone(done, u);
    },
  );

  it("is a 404 naming the project when the delete lands before the upload's row is read", async () => {
    const u = await openUpload();
    let landed = false;
    const db = watchedDb(env.DB, async (sql) => {
      if (landed || !/^select .* from "attachments"/i.test(sql)) return;
      landed = true;
      await deleteOf(u.projectId, u.key)();
    });
    const done = await through(
      { DB: db },
      {
        method: "POST",
        path: `${u.at}/complete`,
        key: u.key,
        body: JSON.stringify({ parts: [u.part] }),
        type: "application/json",
      },
    );
    expect(landed).toBe(true);
    await expectGone(done, u);
  });

  it("is a 404 naming the project when sent after the delete", async () => {
    const u = await openUpload();
    await deleteOf(u.projectId, u.key)();
    const done = await api("POST", `${u.at}/complete`, { parts: [u.part] }, { key: u.key });
    await expectGone({ status: done.status, text: done.text, type: done.headers.get("content-type") }, u);
  });
});

describe("a project file's other routes racing the project's delete", () => {
  it.each(["before", "after"] as const)(
    "a single-request upload is a 404 naming the project when the delete lands %s its bytes are written",
    async (when) => {
      const { tenantId, key } = await newTenantWithId();
      const projectId = (await api("POST", "/v1/projects", { name: "Doomed" }, { key })).json.id as string;
      const bucket = bucketWhere({ method: "put", when, run: deleteOf(projectId, key) });
      const up = await through(
        { BUCKET: bucket },
        {
          method: "POST",
          path: `/v1/projects/${projectId}/files?name=late.txt`,
          key,
          body: "too late\n",
          type: "text/plain",
        },
      );
      await expectGone(up, { tenantId, key, projectId });
    },
  );

  it("a part is a 404 naming the project when the delete lands before R2 takes it", async () => {
    const u = await openUpload();
    const bucket = bucketWhere({ method: "uploadPart", when: "before", run: deleteOf(u.projectId, u.key) });
    const part = await through(
      { BUCKET: bucket },
      { method: "PUT", path: `${u.at}/parts/2`, key: u.key, body: "more\n" },
    );
    await expectGone(part, u);
  });

  it("an abort is a 404 naming the project when the delete lands before it", async () => {
    const u = await openUpload();
    const bucket = bucketWhere({ method: "abort", when: "before", run: deleteOf(u.projectId, u.key) });
    await expectGone(await through({ BUCKET: bucket }, { method: "DELETE", path: u.at, key: u.key }), u);
  });

  it("a part and an abort sent after the delete are a 404 naming the project", async () => {
    const u = await openUpload();
    await deleteOf(u.projectId, u.key)();
    const part = await api("PUT", `${u.at}/parts/2`, "more\n", {
      key: u.key,
      raw: true,
      headers: { "content-type": "application/octet-stream" },
    });
    await expectGone({ status: part.status, text: part.text, type: part.headers.get("content-type") }, u);
    const abort = await api("DELETE", u.at, undefined, { key: u.key });
    await expectGone({ status: abort.status, text: abort.text, type: abort.headers.get("content-type") }, u);
  });
});
