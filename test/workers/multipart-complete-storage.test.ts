// A multipart upload's complete that fails in storage (R2's internal error) is storage's fault,
// not the request's: a 502 storage_error, the upload and its parts kept, and the same complete
// sent again finishes it. Parts R2 does not know stay a 400 naming `parts`, as does a part listed
// twice (which R2 would answer as its internal error).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, createConversation } from "./helpers";

/** The bucket with every multipart upload's complete failing as R2 does when it fails inside. */
function failingCompletes(real: R2Bucket): R2Bucket {
  return new Proxy(real, {
    get(target, prop) {
      if (prop !== "resumeMultipartUpload") {
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      }
      return (key: string, uploadId: string) => {
        const upload = target.resumeMultipartUpload(key, uploadId);
        return new Proxy(upload, {
          get(u, p) {
            if (p === "complete")
              return () =>
                Promise.reject(new Error("completeMultipartUpload: We encountered an internal error. (10001)"));
            const v = Reflect.get(u, p);
            return typeof v === "function" ? v.bind(u) : v;
          },
        });
      };
    },
  });
}

describe("multipart complete failing in storage", () => {
  it("answers 502 storage_error, keeps the upload, and the same complete then finishes it", async () => {
    const id = await createConversation();
    const start = await api("POST", `/v1/conversations/${id}/attachments/uploads`, {
      name: "k.txt",
      type: "text/plain",
    });
    expect(start.status).toBe(201);
    const base = `/v1/conversations/${id}/attachments/uploads/${start.json.attachmentId}` as const;
    const part = await api("PUT", `${base}/parts/1`, "one line\n", {
      raw: true,
      headers: { "content-type": "application/octet-stream" },
    });
    expect(part.status).toBe(200);
    const body = JSON.stringify({ parts: [part.json] });

    const ctx = createExecutionContext();
    const failed = await app.fetch(
      new Request(`http://chat.test${base}/complete`, {
        method: "POST",
        headers: { authorization: "Bearer dev-local-key", "content-type": "application/json" },
        body,
      }),
      { ...(env as Env), BUCKET: failingCompletes(env.BUCKET) },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(failed.status).toBe(502);
    const error = ((await failed.json()) as { error: { type: string; message: string } }).error;
    expect(error.type).toBe("storage_error");
    expect(error.message).toMatch(/send the same complete again/);

    const again = await api("POST", `${base}/complete`, { parts: [part.json] });
    expect(again.status).toBe(201);
    expect(again.json).toMatchObject({ name: "k.txt", facts: { kind: "text", lines: 1 } });
  });

  it("keeps a 400 naming parts for parts R2 does not know", async () => {
    const id = await createConversation();
    const start = await api("POST", `/v1/conversations/${id}/attachments/uploads`, {
      name: "x.txt",
      type: "text/plain",
    });
    const base = `/v1/conversations/${id}/attachments/uploads/${start.json.attachmentId}` as const;
    const done = await api("POST", `${base}/complete`, { parts: [{ partNumber: 1, etag: "no-such-etag" }] });
    expect(done.status).toBe(400);
    expect(done.json.error?.message).toMatch(/^parts: the upload could not be completed .*\(100\d\d\)\)$/);
  });

  it("refuses a part listed twice with a 400 naming parts, before storage is asked", async () => {
    const id = await createConversation();
    const start = await api("POST", `/v1/conversations/${id}/attachments/uploads`, {
      name: "d.txt",
      type: "text/plain",
    });
    const base = `/v1/conversations/${id}/attachments/uploads/${start.json.attachmentId}` as const;
    const part = await api("PUT", `${base}/parts/1`, "one line\n", {
      raw: true,
      headers: { "content-type": "application/octet-stream" },
    });
    expect(part.status).toBe(200);
    const twice = await api("POST", `${base}/complete`, { parts: [part.json, part.json] });
    expect(twice.status).toBe(400);
    expect(twice.json.error?.type).toBe("invalid_request");
    expect(twice.json.error?.message).toBe("parts: part 1 is listed twice");
    // Nothing was spent: the complete without the duplicate finishes the upload.
    const done = await api("POST", `${base}/complete`, { parts: [part.json] });
    expect(done.status).toBe(201);
  });
});
