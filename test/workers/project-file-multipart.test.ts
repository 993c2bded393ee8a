// A project file larger than one request allows goes up through R2 multipart, as a conversation's
// attachment does: start, parts, complete (then listed in the project with its note, and in its
// conversations' prompt); an abort, a refused complete at the project's file limit or a project
// deleted meanwhile leaves nothing of it; another tenant's project and uploads are 404.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { attachmentBlobKey, attachmentPrefix } from "../../r2-layout";
import { MAX_PROJECT_FILES } from "../../services/projects";
import { api, newTenantWithId } from "./helpers";

const rowsNamed = async (projectId: string, name: string) =>
  (
    await env.DB.prepare("SELECT COUNT(*) AS n FROM attachments WHERE project_id = ? AND name = ?")
      .bind(projectId, name)
      .first<{ n: number }>()
  )?.n;
const r2Left = async (tenantId: string, fileId: string) =>
  (await env.BUCKET.list({ prefix: attachmentPrefix(tenantId, fileId) })).objects.length;

async function newProject(key: string, name = "Big files") {
  const p = await api("POST", "/v1/projects", { name }, { key });
  expect(p.status).toBe(201);
  return p.json.id as string;
}

const putPart = (key: string, at: string, n: number, body: string) =>
  api("PUT", `${at}/parts/${n}`, body, { key, raw: true, headers: { "content-type": "application/octet-stream" } });

/** Starts an upload of `name` into the project; its path (`…/uploads/:fileId`) and id. */
async function start(key: string, projectId: string, name: string) {
  const s = await api("POST", `/v1/projects/${projectId}/files/uploads`, { name, type: "text/plain" }, { key });
  expect(s.status, s.text).toBe(201);
  const fileId = s.json.fileId as string;
  return { fileId, at: `/v1/projects/${projectId}/files/uploads/${fileId}` as const, started: s.json };
}

/** `n` ready files of the project, seeded straight into D1 in one statement. */
async function seedFiles(tenantId: string, projectId: string, n: number) {
  const now = new Date().toISOString();
  const prefix = crypto.randomUUID().replaceAll("-", "");
  await env.DB.prepare(
    `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
     INSERT INTO attachments (id, tenant_id, conversation_id, name, type, status, r2_key, created_at, updated_at, project_id)
     SELECT 'att_' || ? || printf('%05d', i), ?, '', 'seeded.txt', 'text/plain', 'ready', 'seeded', ?, ?, ? FROM seq`,
  )
    .bind(n, prefix, tenantId, now, now, projectId)
    .run();
}

describe("a project file's multipart upload", () => {
  it("takes parts and a complete, and the file is listed with its note and named in the project's prompt", async () => {
    const { tenantId, key } = await newTenantWithId();
    const projectId = await newProject(key);
    const { fileId, at, started } = await start(key, projectId, "big.log");
    expect(started).toMatchObject({ fileId: expect.stringMatching(/^att_/), uploadId: expect.any(String) });
    expect(started.minPartBytes).toBe(5 * 1024 * 1024);
    const part1 = `${"a".repeat(5 * 1024 * 1024 - 1)}\n`;
    const part2 = "tail line one\ntail line two\n";
    const p1 = await putPart(key, at, 1, part1);
    const p2 = await putPart(key, at, 2, part2);
    expect([p1.status, p2.status]).toEqual([200, 200]);
    expect(p1.json).toMatchObject({ partNumber: 1, etag: expect.any(String) });
    // Not listed while it is going up.
    expect((await api("GET", `/v1/projects/${projectId}`, undefined, { key })).json.files).toEqual([]);

    const done = await api("POST", `${at}/complete`, { parts: [p1.json, p2.json] }, { key });
    expect(done.status, done.text).toBe(201);
    expect(done.json).toMatchObject({
      id: fileId,
      name: "big.log",
      size: part1.length + part2.length,
      facts: { kind: "text", lines: 3 },
    });
    const project = (await api("GET", `/v1/projects/${projectId}`, undefined, { key })).json;
    expect(project.files).toHaveLength(1);
    expect(project.files[0]).toMatchObject({ id: fileId, name: "big.log", note: expect.stringContaining(fileId) });
    expect(project.files[0].note).toBe(done.json.note);
    const c = await api("POST", "/v1/conversations", { title: "t", projectId }, { key });
    const system = (await api("GET", `/v1/conversations/${c.json.id}/replay`, undefined, { key })).json.system[0].text;
    expect(system).toContain('name="big.log"');
    // Completed: no longer an open upload.
    expect((await api("DELETE", at, undefined, { key })).status).toBe(404);
    expect((await env.BUCKET.head(attachmentBlobKey(tenantId, fileId)))?.size).toBe(part1.length + part2.length);
  });

  it("is removed whole by an abort, and refuses bad parts and completes as the attachments' does", async () => {
    const { tenantId, key } = await newTenantWithId();
    const projectId = await newProject(key);
    const { fileId, at } = await start(key, projectId, "never.log");
    expect((await putPart(key, at, 1, "one line\n")).status).toBe(200);

    const zero = await putPart(key, at, 0, "x");
    expect(zero.status).toBe(400);
    expect(zero.json.error?.message).toBe("part: a number from 1 to 10000");
    expect((await putPart(key, at, 10_001, "x")).status).toBe(400);
    const unknown = await api("POST", `${at}/complete`, { parts: [{ partNumber: 1, etag: "no-such-etag" }] }, { key });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error?.message).toMatch(/^parts: the upload could not be completed/);
    const twice = await api(
      "POST",
      `${at}/complete`,
      {
        parts: [
          { partNumber: 1, etag: "a" },
          { partNumber: 1, etag: "a" },
        ],
      },
      { key },
    );
    expect(twice.status).toBe(400);
    expect(twice.json.error?.message).toMatch(/part 1 is listed twice/);
    const staged = await api(
      "POST",
      `${at}/complete`,
      { parts: [{ partNumber: 1, etag: "a" }], attach: false },
      { key },
    );
    expect(staged.status).toBe(400);
    expect(
      (await api("POST", `/v1/projects/${projectId}/files/uploads`, { name: "a/b", type: "text/plain" }, { key }))
        .status,
    ).toBe(400);

    const abort = await api("DELETE", at, undefined, { key });
    expect(abort.status).toBe(204);
    expect(await r2Left(tenantId, fileId)).toBe(0);
    expect(await rowsNamed(projectId, "never.log")).toBe(0);
    expect((await putPart(key, at, 1, "x")).status).toBe(404);
    expect((await api("POST", `${at}/complete`, { parts: [{ partNumber: 1, etag: "x" }] }, { key })).status).toBe(404);
    expect((await api("DELETE", at, undefined, { key })).status).toBe(404);
    expect((await api("GET", `/v1/projects/${projectId}`, undefined, { key })).json.files).toEqual([]);
  });

  it("is a 404 on another tenant's project and uploads, which stay whole", async () => {
    const owner = await newTenantWithId();
    const projectId = await newProject(owner.key);
    const { at } = await start(owner.key, projectId, "private.txt");
    const part = await putPart(owner.key, at, 1, "the launch code is 0000\n");
    const other = await newTenantWithId();
    const theirs = await newProject(other.key, "Theirs");
    const starting = await api(
      "POST",
      `/v1/projects/${projectId}/files/uploads`,
      { name: "x.txt", type: "text/plain" },
      { key: other.key },
    );
    expect(starting.status).toBe(404);
    expect(starting.json.error?.message).toBe("project not found");
    expect((await putPart(other.key, at, 2, "x")).status).toBe(404);
    expect((await api("POST", `${at}/complete`, { parts: [part.json] }, { key: other.key })).status).toBe(404);
    expect((await api("DELETE", at, undefined, { key: other.key })).status).toBe(404);
    // Through their own project, the owner's upload id is no upload either.
    const via = at.replace(projectId, theirs);
    expect((await putPart(other.key, via, 2, "x")).status).toBe(404);
    expect((await api("POST", `${via}/complete`, { parts: [part.json] }, { key: other.key })).status).toBe(404);
    expect((await api("DELETE", via, undefined, { key: other.key })).status).toBe(404);
    expect((await api("GET", `/v1/projects/${theirs}`, undefined, { key: other.key })).json.files).toEqual([]);
    // The owner's upload was not touched.
    const done = await api("POST", `${at}/complete`, { parts: [part.json] }, { key: owner.key });
    expect(done.status, done.text).toBe(201);
  });

  it("reads a complete listing the most parts an upload may have, not refusing it for its size", async () => {
    const { key } = await newTenantWithId();
    const projectId = await newProject(key);
    const { at } = await start(key, projectId, "huge.log");
    // 10,000 parts with 200-character etags: about 2.4 MB of JSON, past the 256 KiB of other bodies.
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ partNumber: i + 1, etag: "e".repeat(200) }));
    const done = await api("POST", `${at}/complete`, { parts }, { key });
    // R2 refuses these etags (no such parts were uploaded): the listing itself got through.
    expect(done.status).toBe(400);
    expect(done.json.error?.message).toMatch(/^parts: the upload could not be completed/);
  });

  it(`keeps the project's ${MAX_PROJECT_FILES}-file limit: a full project starts none, a complete past it keeps nothing`, async () => {
    const { tenantId, key } = await newTenantWithId();
    const projectId = await newProject(key);
    await seedFiles(tenantId, projectId, MAX_PROJECT_FILES - 1);
    // Two uploads started with room for one: the first complete takes it, the second is refused.
    const a = await start(key, projectId, "a.txt");
    const b = await start(key, projectId, "b.txt");
    const pa = await putPart(key, a.at, 1, "first\n");
    const pb = await putPart(key, b.at, 1, "second\n");
    expect((await api("POST", `${a.at}/complete`, { parts: [pa.json] }, { key })).status).toBe(201);
    const over = await api("POST", `${b.at}/complete`, { parts: [pb.json] }, { key });
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({
      type: "conflict",
      message: expect.stringContaining(`${MAX_PROJECT_FILES} files`),
    });
    expect(await rowsNamed(projectId, "b.txt")).toBe(0);
    expect(await r2Left(tenantId, b.fileId)).toBe(0);
    // Full: a start is refused before any upload begins.
    const full = await api("POST", `/v1/projects/${projectId}/files/uploads`, { name: "c.txt" }, { key });
    expect(full.status).toBe(409);
    expect(await rowsNamed(projectId, "c.txt")).toBe(0);
  });

  it("leaves nothing of an upload whose project is deleted meanwhile", async () => {
    const { tenantId, key } = await newTenantWithId();
    const projectId = await newProject(key);
    const { fileId, at } = await start(key, projectId, "late.txt");
    const part = await putPart(key, at, 1, "too late\n");
    expect((await api("DELETE", `/v1/projects/${projectId}`, undefined, { key })).status).toBe(204);
    expect(await rowsNamed(projectId, "late.txt")).toBe(0);
    expect(await r2Left(tenantId, fileId)).toBe(0);
    expect((await api("POST", `${at}/complete`, { parts: [part.json] }, { key })).status).toBe(404);
    expect(
      (await api("POST", `/v1/projects/${projectId}/files/uploads`, { name: "x.txt" }, { key })).json.error?.message,
    ).toBe("project not found");
  });
});
