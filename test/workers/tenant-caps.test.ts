// Per-tenant counts of memory notes and projects, and of files per project, are capped as tools
// and MCP servers are: the cap is checked in the statement that writes (two creates at cap - 1 never
// both land), a create past it is a 409 naming the limit, and memory_save at the cap answers the
// model an error result rather than failing its turn. Rows up to the cap are seeded straight into D1.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_NOTES } from "../../services/memory/notes";
import { MAX_PROJECT_FILES, MAX_PROJECTS } from "../../services/projects";
import { ofType } from "../blocks";
import { api, createConversation, newTenantWithId, send, turnMessages } from "./helpers";

/** `n` rows made by one statement (a recursive CTE), so seeding 10,000 notes takes a moment. */
async function seed(table: "memory_notes" | "projects" | "attachments", n: number, of: Record<string, string>) {
  const columns = Object.keys(of);
  const prefix = `${crypto.randomUUID().replaceAll("-", "")}_`;
  const ids = { memory_notes: "mem_", projects: "proj_", attachments: "att_" }[table];
  await env.DB.prepare(
    `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
     INSERT INTO ${table} (id, ${columns.join(", ")})
     SELECT '${ids}' || ? || printf('%05d', i), ${columns.map(() => "?").join(", ")} FROM seq`,
  )
    .bind(n, prefix, ...columns.map((c) => of[c]))
    .run();
}

const countOf = async (sql: string, ...args: string[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;

const now = new Date().toISOString();
const noteRow = (tenantId: string) => ({
  tenant_id: tenantId,
  title: "seeded",
  body: "a seeded note",
  created_at: now,
  updated_at: now,
});
const notesOf = (tenantId: string) => countOf("SELECT COUNT(*) AS n FROM memory_notes WHERE tenant_id = ?", tenantId);

describe("memory notes per tenant", () => {
  it(`refuses a note past ${MAX_NOTES} with a 409 naming the limit, and two at once at the cap's edge land one`, async () => {
    const { tenantId, key } = await newTenantWithId();
    await seed("memory_notes", MAX_NOTES - 2, noteRow(tenantId));
    expect((await api("POST", "/v1/memory", { text: "the last but one" }, { key })).status).toBe(201);
    const both = await Promise.all(
      ["racing one", "racing two"].map((text) => api("POST", "/v1/memory", { text }, { key })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const over = await api("POST", "/v1/memory", { text: "one too many" }, { key });
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({ type: "conflict", message: expect.stringContaining(`${MAX_NOTES} notes`) });
    expect(await notesOf(tenantId)).toBe(MAX_NOTES);
    // Another tenant is not counted against it.
    const other = await newTenantWithId();
    expect((await api("POST", "/v1/memory", { text: "mine" }, { key: other.key })).status).toBe(201);
  });

  it("answers memory_save at the cap with an error result the model reads, and the turn completes", async () => {
    const { tenantId, key } = await newTenantWithId();
    await seed("memory_notes", MAX_NOTES, noteRow(tenantId));
    const id = await createConversation(undefined, key);
    const r = await send(id, '@tool memory_save {"text":"Remember the blue door."}', key);
    expect(r.status).toBe(200);
    const result = ofType(turnMessages(r)[2].content[0], "tool_result");
    expect(result.is_error).toBe(true);
    expect(result.content).toEqual(expect.stringContaining(`${MAX_NOTES} notes`));
    expect(result.content).toEqual(expect.stringContaining("memory_forget"));
    expect(await notesOf(tenantId)).toBe(MAX_NOTES);
    // The turn went on past the refused call: the model answered after it.
    expect(turnMessages(r).at(-1)!.role).toBe("assistant");
  });
});

describe("projects per tenant", () => {
  it(`refuses a project past ${MAX_PROJECTS} with a 409 naming the limit, and two at once at the cap's edge land one`, async () => {
    const { tenantId, key } = await newTenantWithId();
    await seed("projects", MAX_PROJECTS - 2, { tenant_id: tenantId, name: "seeded", created_at: now, updated_at: now });
    expect((await api("POST", "/v1/projects", { name: "last but one" }, { key })).status).toBe(201);
    const both = await Promise.all(
      ["racing one", "racing two"].map((name) => api("POST", "/v1/projects", { name }, { key })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const over = await api("POST", "/v1/projects", { name: "one too many" }, { key });
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({
      type: "conflict",
      message: expect.stringContaining(`${MAX_PROJECTS} projects`),
    });
    expect(await countOf("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", tenantId)).toBe(MAX_PROJECTS);
    const other = await newTenantWithId();
    expect((await api("POST", "/v1/projects", { name: "mine" }, { key: other.key })).status).toBe(201);
  });
});

describe("files per project", () => {
  const upload = (key: string, projectId: string, name: string) =>
    api("POST", `/v1/projects/${projectId}/files?name=${name}`, `the bytes of ${name}`, {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
  const readyFiles = (projectId: string) =>
    countOf("SELECT COUNT(*) AS n FROM attachments WHERE project_id = ? AND status = 'ready'", projectId);

  it(`refuses a project's file past ${MAX_PROJECT_FILES} with a 409 naming the limit, and keeps nothing of it`, async () => {
    const { tenantId, key } = await newTenantWithId();
    const project = (await api("POST", "/v1/projects", { name: "full" }, { key })).json;
    const seeded = {
      tenant_id: tenantId,
      conversation_id: "",
      name: "seeded.txt",
      type: "text/plain",
      status: "ready",
      r2_key: "seeded",
      created_at: now,
      updated_at: now,
      project_id: project.id,
    };
    await seed("attachments", MAX_PROJECT_FILES - 1, seeded);
    expect((await upload(key, project.id, "last.txt")).status).toBe(201);
    const over = await upload(key, project.id, "over.txt");
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({
      type: "conflict",
      message: expect.stringContaining(`${MAX_PROJECT_FILES} files`),
    });
    expect(await readyFiles(project.id)).toBe(MAX_PROJECT_FILES);
    // The refused file left no row (and so no bytes the purge did not take).
    expect(
      await countOf("SELECT COUNT(*) AS n FROM attachments WHERE project_id = ? AND name = 'over.txt'", project.id),
    ).toBe(0);
    // Another project of the same tenant has room of its own.
    const roomy = (await api("POST", "/v1/projects", { name: "roomy" }, { key })).json;
    expect((await upload(key, roomy.id, "first.txt")).status).toBe(201);
  });

  it("lets at most one of two uploads at the cap's edge land", async () => {
    const { tenantId, key } = await newTenantWithId();
    const project = (await api("POST", "/v1/projects", { name: "edge" }, { key })).json;
    await seed("attachments", MAX_PROJECT_FILES - 1, {
      tenant_id: tenantId,
      conversation_id: "",
      name: "seeded.txt",
      type: "text/plain",
      status: "ready",
      r2_key: "seeded",
      created_at: now,
      updated_at: now,
      project_id: project.id,
    });
    const both = await Promise.all(["a.txt", "b.txt"].map((name) => upload(key, project.id, name)));
    for (const r of both) expect([201, 409], r.text).toContain(r.status);
    expect(both.some((r) => r.status === 409)).toBe(true);
    expect(await readyFiles(project.id)).toBeLessThanOrEqual(MAX_PROJECT_FILES);
    expect(await countOf("SELECT COUNT(*) AS n FROM attachments WHERE project_id = ?", project.id)).toBeLessThanOrEqual(
      MAX_PROJECT_FILES,
    );
  });
});
