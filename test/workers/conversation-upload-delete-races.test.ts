// A conversation's upload routes racing the conversation's DELETE: each request has passed the
// route's check of the conversation, then the delete lands at one R2 call of it (forced by wrapping
// the request's bucket) and purges the upload's row, bytes and open upload. The answer is the 404 a
// missing conversation gets (GET /v1/conversations/:id's), never the file's own failure (its bytes
// missing, a 500; R2's "no such upload", a 400 naming `parts` or a 404 naming the upload), and
// nothing of the file is left in D1 or R2. As the project's routes answer (project-file-delete-races).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantPrefix } from "../../r2-layout";
import { app } from "../../workers/chat/app";
import { api, createConversation, eventually, newTenantWithId, r2KeysUnder } from "./helpers";

type Method = "put" | "get" | "complete" | "uploadPart" | "abort" | "list";

/** Where the delete lands: before or after the first R2 call `method` of the racing request. */
type Landing = { method: Method; when: "before" | "after" };

/**
 * The app's bucket whose first call of `at.method` (the bucket's, or an upload's) runs `run` beside
 * it; a `get` only when ranged (a read of the bytes, as the inspection makes).
 */
function bucketWhere(at: Landing & { run: () => Promise<void> }): R2Bucket {
  let done = false;
  const hooked = <T extends object>(target: T, prop: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, prop);
    if (typeof value !== "function") return value;
    if (prop !== at.method || done) return value.bind(target);
    return async (...args: unknown[]) => {
      const ranged = (args[1] as { range?: unknown } | undefined)?.range !== undefined;
      if (prop === "get" && !ranged) return value.apply(target, args);
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

/** One request through the app with `bucket` in place of the real one. */
async function through(
  bucket: R2Bucket,
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
    { ...env, BUCKET: bucket },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text };
}

type Conversation = { tenantId: string; key: string; id: string };

const newConversation = async (): Promise<Conversation> => {
  const { tenantId, key } = await newTenantWithId();
  return { tenantId, key, id: await createConversation(undefined, key) };
};

/** The conversation's DELETE, as `run` of a landing: it must succeed, whatever the racing request does. */
const deleteOf = (c: Conversation) => async () => {
  expect((await api("DELETE", `/v1/conversations/${c.id}`, undefined, { key: c.key })).status).toBe(204);
};

/** The answer is a missing conversation's, word for word, and nothing of the tenant's files is left. */
async function expectGone(answer: { status: number; text: string }, c: Conversation) {
  const missing = await api("GET", `/v1/conversations/${c.id}`, undefined, { key: c.key });
  expect(missing.status).toBe(404);
  expect(answer.status, answer.text).toBe(404);
  expect(JSON.parse(answer.text).error).toEqual(missing.json.error);
  expect(JSON.parse(answer.text).error.message).toBe("conversation not found");
  const rows = await env.DB.prepare("SELECT id FROM attachments WHERE tenant_id = ?").bind(c.tenantId).all();
  expect(rows.results).toEqual([]);
  await eventually(async () => (await r2KeysUnder(`${tenantPrefix(c.tenantId)}attachments/`)).length === 0);
}

/** The conversation with one open upload of one part: its path and the part. */
async function openUpload() {
  const c = await newConversation();
  const s = await api("POST", `/v1/conversations/${c.id}/attachments/uploads`, { name: "late.txt" }, { key: c.key });
  expect(s.status, s.text).toBe(201);
  const at = `/v1/conversations/${c.id}/attachments/uploads/${s.json.attachmentId}`;
  const part = await api("PUT", `${at}/parts/1`, "too late\n", {
    key: c.key,
    raw: true,
    headers: { "content-type": "application/octet-stream" },
  });
  expect(part.status).toBe(200);
  return { ...c, at, aid: s.json.attachmentId as string, part: part.json as { partNumber: number; etag: string } };
}

const CSV = Array.from({ length: 2000 }, (_, i) => `line ${i} of the quarterly report`).join("\n");

describe("a conversation's single-request upload racing the conversation's delete", () => {
  for (const attach of ["true", "false"] as const)
    for (const when of ["before", "after"] as const)
      it(`is a 404 naming the conversation when the delete lands ${when} its bytes are written (attach=${attach})`, async () => {
        const c = await newConversation();
        const up = await through(bucketWhere({ method: "put", when, run: deleteOf(c) }), {
          method: "POST",
          path: `/v1/conversations/${c.id}/attachments?name=late.txt&attach=${attach}`,
          key: c.key,
          body: "too late\n",
          type: "text/plain",
        });
        await expectGone(up, c);
      });

  it("is a 404 naming the conversation when the delete lands as the inspection first reads the bytes", async () => {
    const c = await newConversation();
    const up = await through(bucketWhere({ method: "get", when: "before", run: deleteOf(c) }), {
      method: "POST",
      path: `/v1/conversations/${c.id}/attachments?name=report.csv`,
      key: c.key,
      body: CSV,
      type: "text/csv",
    });
    await expectGone(up, c);
  });
});

describe("a conversation's multipart upload racing the conversation's delete", () => {
  for (const attach of [true, false])
    for (const when of ["before", "after"] as const)
      it(`a complete is a 404 naming the conversation when the delete lands ${when} R2 joins the parts (attach: ${attach})`, async () => {
        const u = await openUpload();
        const done = await through(bucketWhere({ method: "complete", when, run: deleteOf(u) }), {
          method: "POST",
          path: `${u.at}/complete`,
          key: u.key,
          body: JSON.stringify({ parts: [u.part], attach }),
          type: "application/json",
        });
        await expectGone(done, u);
      });

  it("a part is a 404 naming the conversation when the delete lands before R2 takes it", async () => {
    const u = await openUpload();
    const part = await through(bucketWhere({ method: "uploadPart", when: "before", run: deleteOf(u) }), {
      method: "PUT",
      path: `${u.at}/parts/2`,
      key: u.key,
      body: "more\n",
    });
    await expectGone(part, u);
  });

  it("an abort is a 404 naming the conversation when the delete lands before it", async () => {
    const u = await openUpload();
    const abort = await through(bucketWhere({ method: "abort", when: "before", run: deleteOf(u) }), {
      method: "DELETE",
      path: u.at,
      key: u.key,
    });
    await expectGone(abort, u);
  });

  it("a part, a complete and an abort sent after the delete are a 404 naming the conversation", async () => {
    const u = await openUpload();
    await deleteOf(u)();
    const part = await api("PUT", `${u.at}/parts/2`, "more\n", {
      key: u.key,
      raw: true,
      headers: { "content-type": "application/octet-stream" },
    });
    await expectGone(part, u);
    await expectGone(await api("POST", `${u.at}/complete`, { parts: [u.part] }, { key: u.key }), u);
    await expectGone(await api("DELETE", u.at, undefined, { key: u.key }), u);
  });
});

describe("an attachment's DELETE racing its conversation's delete", () => {
  it("is a 404 naming the conversation when the conversation's delete lands as it removes the bytes", async () => {
    const c = await newConversation();
    const up = await api("POST", `/v1/conversations/${c.id}/attachments?name=a.txt`, "hello\n", {
      key: c.key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(up.status, up.text).toBe(201);
    const gone = await through(bucketWhere({ method: "list", when: "before", run: deleteOf(c) }), {
      method: "DELETE",
      path: `/v1/conversations/${c.id}/attachments/${up.json.id}`,
      key: c.key,
    });
    await expectGone(gone, c);
  });
});

describe("a multipart complete racing its own abort (the conversation stays)", () => {
  for (const when of ["before", "after"] as const)
    it(`is the upload's 404, as the complete sent again gets, when the abort lands ${when} R2 joins the parts`, async () => {
      const u = await openUpload();
      const abort = async () => {
        expect((await api("DELETE", u.at, undefined, { key: u.key })).status).toBe(204);
      };
      const body = JSON.stringify({ parts: [u.part] });
      const done = await through(bucketWhere({ method: "complete", when, run: abort }), {
        method: "POST",
        path: `${u.at}/complete`,
        key: u.key,
        body,
        type: "application/json",
      });
      const again = await api("POST", `${u.at}/complete`, { parts: [u.part] }, { key: u.key });
      expect(again.status).toBe(404);
      expect(done.status, done.text).toBe(404);
      expect(again.json.error).toEqual({ type: "not_found", message: "upload not found" });
      expect(JSON.parse(done.text).error).toEqual(again.json.error);
      expect((await api("GET", `/v1/conversations/${u.id}`, undefined, { key: u.key })).status).toBe(200);
      const rows = await env.DB.prepare("SELECT id FROM attachments WHERE tenant_id = ?").bind(u.tenantId).all();
      expect(rows.results).toEqual([]);
      expect(await r2KeysUnder(`${tenantPrefix(u.tenantId)}attachments/`)).toEqual([]);
    });
});
