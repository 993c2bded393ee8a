// A part's upload racing an abort of the same upload: the row was read while the upload was open,
// then the abort took the upload before R2 got the part (forced by wrapping the bucket), so R2 says
// there is no such upload (10024). That is the upload's 404, as the same PUT sent after the abort
// gets, not a 500. Conversation attachments and project files share the part route's code.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, createConversation, newTenant } from "./helpers";

/** The bucket whose first `uploadPart` of a resumed upload runs `first` before it. */
function bucketAbortingFirst(first: () => Promise<unknown>): R2Bucket {
  let done = false;
  return new Proxy(env.BUCKET, {
    get(bucket, prop) {
      if (prop !== "resumeMultipartUpload") return Reflect.get(bucket, prop).bind(bucket);
      return (key: string, uploadId: string) =>
        new Proxy(bucket.resumeMultipartUpload(key, uploadId), {
          get(upload, p) {
            const value = Reflect.get(upload, p);
            if (typeof value !== "function") return value;
            if (p !== "uploadPart" || done) return value.bind(upload);
            return async (...args: Parameters<R2MultipartUpload["uploadPart"]>) => {
              done = true;
              await first();
              return upload.uploadPart(...args);
            };
          },
        });
    },
  });
}

async function putThrough(bucket: R2Bucket, { path, key }: { path: string; key: string }) {
  const ctx = createExecutionContext();
  const body = "a part\n";
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/octet-stream",
        "content-length": String(body.length),
      },
      body,
    }),
    { ...env, BUCKET: bucket },
    ctx,
  );
  const json: unknown = await res.json();
  await waitOnExecutionContext(ctx);
  return { status: res.status, json };
}

describe("a part uploaded while its upload is aborted", () => {
  it("answers the upload's 404 on a conversation's and a project's upload, never a 500", async () => {
    const key = await newTenant();
    const conversation = await createConversation(undefined, key);
    const c = await api("POST", `/v1/conversations/${conversation}/attachments/uploads`, { name: "a.txt" }, { key });
    expect(c.status, c.text).toBe(201);
    const project = (await api("POST", "/v1/projects", { name: "P" }, { key })).json.id as string;
    const p = await api("POST", `/v1/projects/${project}/files/uploads`, { name: "b.txt" }, { key });
    expect(p.status, p.text).toBe(201);
    for (const at of [
      `/v1/conversations/${conversation}/attachments/uploads/${c.json.attachmentId}`,
      `/v1/projects/${project}/files/uploads/${p.json.fileId}`,
    ]) {
      const abort = () => api("DELETE", at, undefined, { key });
      const raced = await putThrough(bucketAbortingFirst(abort), { path: `${at}/parts/1`, key });
      expect(raced).toEqual({ status: 404, json: { error: { type: "not_found", message: "upload not found" } } });
      const after = await api("PUT", `${at}/parts/1`, "late\n", {
        key,
        raw: true,
        headers: { "content-type": "application/octet-stream" },
      });
      expect({ status: after.status, json: after.json }).toEqual(raced);
    }
  });
});
