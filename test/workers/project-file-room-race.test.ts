// Files uploaded into a project at once (the web UI starts every picked file together) with room
// for only some of them: exactly as many as fit are kept, and each of the others is a 409 naming
// the limit that leaves no row and no bytes. A file is made ready only while its project has room,
// in that one statement, so the files racing for the places never refuse one another.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_PROJECT_FILES } from "../../services/projects";
import { api, newTenantWithId, r2KeysUnder } from "./helpers";

/** `n` ready files of the project, seeded straight into D1 in one statement (no bytes in R2). */
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

const countOf = async (sql: string, ...args: string[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;

async function newProject(key: string) {
  const p = await api("POST", "/v1/projects", { name: "Many files" }, { key });
  expect(p.status).toBe(201);
  return p.json.id as string;
}

/** The attachment ids the tenant's R2 objects belong to (`tenants/:t/attachments/:id/...`). */
const idsInR2 = async (tenantId: string) =>
  new Set((await r2KeysUnder(`tenants/${tenantId}/attachments/`)).map((k) => k.split("/")[3]));

const putPart = (key: string, at: string, n: number, body: string) =>
  api("PUT", `${at}/parts/${n}`, body, { key, raw: true, headers: { "content-type": "application/octet-stream" } });

describe("project files uploaded at once with room for some", () => {
  it("keeps exactly as many as fit and refuses the rest with a 409, leaving nothing of them", async () => {
    const { tenantId, key } = await newTenantWithId();
    const projectId = await newProject(key);
    const room = 50;
    await seedFiles(tenantId, projectId, MAX_PROJECT_FILES - room);
    const answers = await Promise.all(
      Array.from({ length: room + 10 }, (_, i) =>
        api("POST", `/v1/projects/${projectId}/files?name=f${i}.txt`, `file ${i}\n`, {
          key,
          raw: true,
          headers: { "content-type": "text/plain" },
        }),
      ),
    );
    const kept = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status === 409);
    expect(kept.length, answers.map((r) => r.status).join(" ")).toBe(room);
    expect(refused.length).toBe(10);
    for (const r of refused)
      expect(r.json.error).toMatchObject({
        type: "conflict",
        message: expect.stringContaining(`${MAX_PROJECT_FILES} files`),
      });
    const readyIn = (status: string) =>
      countOf("SELECT COUNT(*) AS n FROM attachments WHERE project_id = ? AND status = ?", projectId, status);
    expect(await readyIn("ready")).toBe(MAX_PROJECT_FILES);
    // The refused files left no row (of any status) and no bytes: R2 holds the kept files' only.
    expect(await countOf("SELECT COUNT(*) AS n FROM attachments WHERE tenant_id = ?", tenantId)).toBe(
      MAX_PROJECT_FILES,
    );
    const keptIds = new Set(kept.map((r) => r.json.id as string));
    expect(await idsInR2(tenantId)).toEqual(keptIds);
    // The project lists every kept file, and a further one is refused before its bytes are read.
    const listed = await api("GET", `/v1/projects/${projectId}/files?limit=${MAX_PROJECT_FILES}`, undefined, { key });
    expect(listed.json.data.length).toBe(MAX_PROJECT_FILES);
    const more = await api("POST", `/v1/projects/${projectId}/files?name=more.txt`, "more\n", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(more.status).toBe(409);
  });

  it("keeps as many multipart completes as fit when they land at once", async () => {
    const { tenantId, key } = await newTenantWithId();
    const projectId = await newProject(key);
    await seedFiles(tenantId, projectId, MAX_PROJECT_FILES - 2);
    // Five uploads started while there was room, completed together: two places, two kept.
    const started = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const s = await api("POST", `/v1/projects/${projectId}/files/uploads`, { name: `m${i}.txt` }, { key });
        expect(s.status, s.text).toBe(201);
        const at = `/v1/projects/${projectId}/files/uploads/${s.json.fileId}`;
        const part = await putPart(key, at, 1, `multipart ${i}\n`);
        return { at, part: part.json };
      }),
    );
    const answers = await Promise.all(
      started.map(({ at, part }) => api("POST", `${at}/complete`, { parts: [part] }, { key })),
    );
    const kept = answers.filter((r) => r.status === 201);
    expect(kept.length, answers.map((r) => r.status).join(" ")).toBe(2);
    expect(answers.filter((r) => r.status === 409).length).toBe(3);
    expect(await countOf("SELECT COUNT(*) AS n FROM attachments WHERE tenant_id = ?", tenantId)).toBe(
      MAX_PROJECT_FILES,
    );
    expect(await idsInR2(tenantId)).toEqual(new Set(kept.map((r) => (JSON.parse(r.text) as { id: string }).id)));
  });
});
