// The committed OpenAPI document declares the headers and statuses the routes really answer or read:
// x-cortex-bookmark (search, note writes, deletes), a turn's and an idempotent create's headers and
// 422/409, and the 429 rate_limited with Retry-After of every authenticated operation. Each claim
// is shown live first, so the declaration follows what is sent.
import { describe, expect, it } from "vitest";
import committed from "../../client/openapi.gen.json";
import { ERROR_TYPES } from "../../workers/chat/errors";
import { callWith } from "./app-with-vars";
import { upload } from "./attachment-helpers";
import { api, createConversation, newTenant } from "./helpers";

type Ref = { $ref?: string };
type Param = Ref & { name?: string; in?: string };
type Response = Ref & { description?: string; headers?: Record<string, Ref> };
type Op = { parameters?: Param[]; responses: Record<string, Response> };
type Components = {
  parameters: Record<string, Param>;
  headers: Record<string, { description?: string }>;
  responses: Record<string, Response & { content?: Record<string, { schema: Ref }> }>;
};
const doc = committed as unknown as { paths: Record<string, Record<string, Op>>; components: Components };
const op = (method: string, path: string) => doc.paths[path][method];
const resolveParam = (p: Param): Param => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop() ?? ""] : p);
const headerParams = (o: Op) =>
  (o.parameters ?? [])
    .map(resolveParam)
    .filter((p) => p?.in === "header")
    .map((p) => (p.name ?? "").toLowerCase());
const answerHeaders = (o: Op, status: number) =>
  Object.keys(o.responses[String(status)]?.headers ?? {}).map((h) => h.toLowerCase());

describe("the OpenAPI document declares what the server answers", () => {
  it("x-cortex-bookmark: read by GET /v1/search, answered by search, note writes and the deletes", async () => {
    const key = await newTenant();
    const note = await api("POST", "/v1/memory", { text: "zebras have stripes" }, { key });
    const search = await api("GET", "/v1/search?q=zebras", undefined, { key });
    const bad = await api("GET", "/v1/search?q=zebras", undefined, { key, headers: { "x-cortex-bookmark": "nope" } });
    const patched = await api("PATCH", `/v1/memory/${note.json.id}`, { title: "z" }, { key });
    const removed = await api("DELETE", `/v1/memory/${note.json.id}`, undefined, { key });
    const conv = await createConversation(undefined, key);
    const att = await upload(conv, "n.txt", "striped notes\n", "text/plain", key);
    expect(att.status, att.text).toBe(201);
    const attDel = await api("DELETE", `/v1/conversations/${conv}/attachments/${att.json.id}`, undefined, { key });
    const del = await api("DELETE", `/v1/conversations/${conv}`, undefined, { key });
    const project = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id as string;
    const file = await api("POST", `/v1/projects/${project}/files?name=n.txt`, "striped notes\n", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(file.status, file.text).toBe(201);
    const fileDel = await api("DELETE", `/v1/projects/${project}/files/${file.json.id}`, undefined, { key });
    const projectDel = await api("DELETE", `/v1/projects/${project}`, undefined, { key });
    // Really sent (and read: a malformed one is refused).
    for (const [what, r] of Object.entries({ note, search, patched, removed, attDel, del, fileDel, projectDel }))
      expect(r.headers.get("x-cortex-bookmark"), what).toMatch(/@/);
    expect(bad.status).toBe(400);
    // Declared.
    expect(doc.components.parameters.CortexBookmark).toMatchObject({ name: "x-cortex-bookmark", in: "header" });
    expect(doc.components.headers.CortexBookmark.description).toBeTruthy();
    expect(headerParams(op("get", "/v1/search"))).toContain("x-cortex-bookmark");
    const answered: [string, string, number][] = [
      ["get", "/v1/search", 200],
      ["post", "/v1/memory", 201],
      ["patch", "/v1/memory/{id}", 200],
      ["delete", "/v1/memory/{id}", 204],
      ["delete", "/v1/conversations/{id}/attachments/{attachmentId}", 204],
      ["delete", "/v1/conversations/{id}", 204],
      ["delete", "/v1/projects/{id}/files/{fileId}", 204],
      ["delete", "/v1/projects/{id}", 204],
    ];
    for (const [method, path, status] of answered)
      expect(op(method, path).responses[String(status)].headers?.["x-cortex-bookmark"], `${method} ${path}`).toEqual({
        $ref: "#/components/headers/CortexBookmark",
      });
    // Nothing else claims it.
    expect(headerParams(op("post", "/v1/memory"))).not.toContain("x-cortex-bookmark");
    expect(answerHeaders(op("get", "/v1/memory"), 200)).not.toContain("x-cortex-bookmark");
  });

  it("a turn's 422 idempotency_key_reused, 409 with Retry-After and its answer headers; an idempotent create's", async () => {
    const key = await newTenant();
    const conv = await createConversation(undefined, key);
    const h = { "idempotency-key": "declared-key-1" };
    const first = await api("POST", `/v1/conversations/${conv}/messages`, { content: "a" }, { key, headers: h });
    const again = await api("POST", `/v1/conversations/${conv}/messages`, { content: "a" }, { key, headers: h });
    const other = await api("POST", `/v1/conversations/${conv}/messages`, { content: "b" }, { key, headers: h });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-conversation-id")).toBe(conv);
    expect(first.headers.get("server-timing")).toMatch(/model;dur=/);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect([other.status, other.json.error?.type]).toEqual([422, "idempotency_key_reused"]);
    const chan = await api(
      "POST",
      "/v1/channels/declared/messages",
      { content: "hi" },
      {
        key,
        headers: { accept: "text/event-stream" },
      },
    );
    expect(chan.headers.get("x-conversation-id")).toMatch(/^conv_/);
    const ck = { "idempotency-key": "declared-create-1" };
    const created = await api("POST", "/v1/conversations", {}, { key, headers: ck });
    const replayed = await api("POST", "/v1/conversations", {}, { key, headers: ck });
    expect([created.status, replayed.status, replayed.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);

    for (const path of ["/v1/conversations/{id}/messages", "/v1/conversations/{id}/tool-results"]) {
      const turn = op("post", path);
      expect(Object.keys(turn.responses), path).toContain("422");
      expect(turn.responses["422"].description, path).toContain("idempotency_key_reused");
      expect(answerHeaders(turn, 200), path).toEqual(
        expect.arrayContaining(["idempotent-replayed", "x-conversation-id", "server-timing"]),
      );
      expect(turn.responses["409"].description, path).toContain("idempotency_in_progress");
      expect(answerHeaders(turn, 409), path).toContain("retry-after");
    }
    const chanOp = op("post", "/v1/channels/{name}/messages");
    expect(answerHeaders(chanOp, 200)).toEqual(expect.arrayContaining(["x-conversation-id", "server-timing"]));
    // The channel's turn takes no Idempotency-Key: nothing of one is declared there.
    expect(Object.keys(chanOp.responses)).not.toContain("422");
    expect(answerHeaders(chanOp, 200)).not.toContain("idempotent-replayed");
    for (const path of ["/v1/conversations", "/v1/conversations/import"]) {
      expect(answerHeaders(op("post", path), 201), path).toContain("idempotent-replayed");
      expect(answerHeaders(op("post", path), 409), path).toContain("retry-after");
    }
  });

  it("429 rate_limited with Retry-After on every authenticated operation", async () => {
    const key = await newTenant();
    const vars = { RATE_LIMIT_PER_MINUTE: "1", TURN_RATE_LIMIT_PER_MINUTE: "0" };
    await callWith(vars, { method: "GET", path: "/v1/conversations", key });
    const over = await callWith(vars, { method: "GET", path: "/v1/conversations", key });
    expect([over.status, over.json?.error?.type]).toEqual([429, "rate_limited"]);
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
    // Answered before the request's D1 session: no bookmark, and none declared.
    expect(over.headers.get("x-d1-bookmark")).toBeNull();

    const limited = doc.components.responses.RateLimited;
    expect(limited.description).toContain("rate_limited");
    expect(Object.keys(limited.headers ?? {}).map((h) => h.toLowerCase())).toEqual(["request-id", "retry-after"]);
    expect(limited.content?.["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, o]) => ({ path, method, o })),
    );
    const v1 = ops.filter((x) => x.path.startsWith("/v1/"));
    expect(v1.length).toBeGreaterThan(40);
    for (const { path, method, o } of v1)
      expect(o.responses["429"], `${method} ${path}`).toEqual({ $ref: "#/components/responses/RateLimited" });
    for (const { path, method, o } of ops.filter((x) => !x.path.startsWith("/v1/")))
      expect(o.responses["429"], `${method} ${path}`).toBeUndefined();
  });

  it("the error table names the types these answers carry, with their statuses", () => {
    const statuses = Object.fromEntries(Object.entries(ERROR_TYPES).map(([type, row]) => [type, row.status]));
    expect(statuses).toMatchObject({
      rate_limited: 429,
      idempotency_in_progress: 409,
      idempotency_key_reused: 422,
      turn_interrupted: 502,
      config_invalid: 500,
      api_error: 500,
    });
  });
});
