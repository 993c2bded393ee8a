// /v1/projects: create and list projects, and upload files shared by their conversations.
import { Hono } from "hono";
import { z } from "zod";
import { attachmentNote } from "../../../core/attachments/note";
import { isId } from "../../../core/ids";
import { notFound } from "../errors";
import { createProject, getProject, listProjects, projectFiles } from "../projects";
import type { AppEnv } from "../types";
import { idCursor, listBody, pageOf } from "../paging";
import { intParam, jsonBody, query } from "../validate";
import { declaredType, NAME, newRow, storeUpload } from "./attachments";

export const projectRoutes = new Hono<AppEnv>();

const projectId = (id: string) => {
  if (!isId("proj", id)) throw notFound("project");
  return id;
};

projectRoutes.post("/", ...jsonBody(z.strictObject({ name: z.string().trim().min(1).max(200) })), async (c) => {
  const { tenantId: _t, ...p } = await createProject(c.env.DB, c.get("tenantId"), c.req.valid("json").name);
  return c.json(p, 201);
});

const listQuery = z.strictObject({ limit: intParam(1, 200).default(100), cursor: idCursor("proj", "a project id") });

projectRoutes.get("/", query(listQuery), async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const rows = await listProjects(c.env.DB, c.get("tenantId"), limit + 1, cursor);
  return c.json(listBody("projects", pageOf(rows.map(({ tenantId: _t, ...p }) => p), limit, (p) => p.id)));
});

projectRoutes.get("/:id", async (c) => {
  const project = await getProject(c.env.DB, c.get("tenantId"), projectId(c.req.param("id")));
  if (!project) throw notFound("project");
  const files = await projectFiles(c.env.DB, c.get("tenantId"), project.id);
  const { tenantId: _t, ...p } = project;
  return c.json({ ...p, files: files.map((f) => ({ ...f, note: attachmentNote(f) })) });
});

projectRoutes.post("/:id/files", query(z.strictObject({ name: NAME })), async (c) => {
  const tenantId = c.get("tenantId");
  const project = await getProject(c.env.DB, tenantId, projectId(c.req.param("id")));
  if (!project) throw notFound("project");
  const row = newRow(tenantId, "", c.req.valid("query").name, declaredType(c.req.header("content-type")), "uploading", project.id);
  const file = await storeUpload(c.env, c.req.raw, row, null);
  await c.env.DB.prepare(`UPDATE projects SET updated_at = ? WHERE id = ?`).bind(new Date().toISOString(), project.id).run();
  return c.json(file, 201);
});
