// /v1/projects: create and list projects, and upload files shared by their conversations.
import { Hono } from "hono";
import { z } from "zod";
import { attachmentNote } from "../../../services/attachments/note";
import { isId } from "../../../core/ids";
import { attachmentToDelete, purgeAttachment } from "../../../services/attachments/delete";
import type { AttachmentRow } from "../../../services/attachments/store";
import {
  createProject,
  deleteProject,
  finishProjectDelete,
  getProject,
  keepProjectFile,
  listProjects,
  PROJECT_FULL,
  MAX_PROJECTS,
  projectFiles,
  projectHasRoom,
  PROMPT_PROJECT_FILES,
  type Project,
  updateProject,
} from "../../../services/projects";
import {
  parseStoredSettings,
  projectSettingsChecked,
  SETTINGS_ATTEMPTS,
  tenantSettingsAsRead,
} from "../../../services/default-settings";
import { settingsPatchSchema, type SettingsPatch } from "../../../core/settings";
import { ApiError, badRequest, notFound } from "../errors";
import type { AppEnv } from "../types";
import { idCursor, listBody, pageOf } from "../paging";
import { intParam, jsonBody, query, visibleName } from "../validate";
import { declaredType, finishUpload, newRow, storeUpload } from "./attachments";
import {
  completeParts,
  createUpload,
  multipartDocs,
  NAME,
  openUpload,
  putPart,
  startUpload,
  uploadedParts,
} from "./multipart-upload";
import { cortexBookmarkAnswer, doc } from "../openapi/registry";
import { listOf, resource } from "../openapi/schemas";
import { cortexFor } from "../../../services/cortex/routing";
import { answerCortexBookmark } from "./search";
import { settingsChangedMeanwhile } from "./settings";

const project = resource("Project", "A project: name and the files its conversations share.");
const projectWithFiles = z
  .looseObject({
    id: z.string(),
    files: z.array(z.looseObject({ id: z.string(), name: z.string() })),
    filesNext: z.union([z.string(), z.number(), z.null()]),
  })
  .meta({
    id: "ProjectWithFiles",
    description: "A project and the first page of its files (`filesNext`: the cursor of the next page).",
  });

/** A file as its upload answers it: the attachment's fields and the note the project's conversations get. */
const uploadedFile = z.looseObject({ id: z.string(), name: z.string(), note: z.string() });

export const projectRoutes = new Hono<AppEnv>();

const projectId = (id: string) => {
  if (!isId("proj", id)) throw notFound("project");
  return id;
};

/**
 * A project's settings are checked exactly as its new conversations get them (services/default-settings.ts
 * projectSettingsChecked): its own keys strictly, over the tenant's; a 400 naming the field. Answers
 * the tenant's settings version read before the check: `write` is made under it, and answers
 * "changed" when the tenant's settings were written meanwhile; then they are checked again, over
 * what that write left. Another project's settings written meanwhile never make it check again.
 */
async function withProjectSettingsChecked<T>(
  env: Env,
  { tenantId, project }: { tenantId: string; project: SettingsPatch },
  write: (settingsVersion: number) => Promise<T | "changed">,
): Promise<T> {
  for (let attempt = 0; attempt < SETTINGS_ATTEMPTS; attempt++) {
    const { settings: tenant, version } = await tenantSettingsAsRead(env.DB, tenantId);
    const made = await projectSettingsChecked(env, { tenant, project });
    if (!made.ok) throw badRequest(made.message);
    const written = await write(version);
    if (written !== "changed") return written;
  }
  throw settingsChangedMeanwhile();
}

/** A project as the API shows it: its settings as the patch they are. */
const view = ({ tenantId: _t, settings, ...p }: Project) => ({ ...p, settings: parseStoredSettings(settings) });

projectRoutes.post(
  "/",
  doc({
    summary: "Create a project (its `settings` start every conversation made in it, over the tenant's)",
    responses: { 201: { description: "Created", schema: project } },
  }),
  ...jsonBody(z.strictObject({ name: visibleName, settings: settingsPatchSchema.optional() })),
  async (c) => {
    const { name, settings } = c.req.valid("json");
    const tenantId = c.get("tenantId");
    const created = settings
      ? await withProjectSettingsChecked(c.env, { tenantId, project: settings }, (settingsVersion) =>
          createProject(c.env.DB, tenantId, { name, settings, settingsVersion }),
        )
      : await createProject(c.env.DB, tenantId, { name });
    if (created === "limit")
      throw new ApiError(
        409,
        "conflict",
        `the tenant has ${MAX_PROJECTS} projects, the most it may have; delete one before creating another`,
      );
    return c.json(view(created), 201);
  },
);

projectRoutes.patch(
  "/:id",
  doc({
    summary: "Rename a project or replace its settings (conversations made from now on start with them)",
    responses: { 200: { description: "The project", schema: project } },
  }),
  ...jsonBody(
    z
      .strictObject({ name: visibleName.optional(), settings: settingsPatchSchema.optional() })
      .refine((b) => b.name !== undefined || b.settings !== undefined, "give name or settings"),
  ),
  async (c) => {
    const tenantId = c.get("tenantId");
    const id = projectId(c.req.param("id"));
    const { name, settings } = c.req.valid("json");
    if (!(await getProject(c.env.DB, tenantId, id))) throw notFound("project");
    const change = { name, settings };
    const written = settings
      ? await withProjectSettingsChecked(c.env, { tenantId, project: settings }, (settingsVersion) =>
          updateProject(c.env.DB, { tenantId, id, change, settingsVersion }),
        )
      : await updateProject(c.env.DB, { tenantId, id, change });
    if (written === "missing") throw notFound("project");
    const updated = await getProject(c.env.DB, tenantId, id);
    if (!updated) throw notFound("project");
    return c.json(view(updated));
  },
);

const listQuery = z.strictObject({ limit: intParam(1, 200).default(100), cursor: idCursor("proj", "a project id") });

projectRoutes.get(
  "/",
  doc({ summary: "List projects", responses: { 200: { description: "A page", schema: listOf(project) } } }),
  query(listQuery),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listProjects(c.env.DB, { tenantId: c.get("tenantId"), limit: limit + 1, before: cursor });
    return c.json(listBody(pageOf(rows.map(view), limit, (p) => p.id)));
  },
);

const filesQuery = z.strictObject({
  limit: intParam(1, PROMPT_PROJECT_FILES).default(100),
  cursor: idCursor("att", "a file id"),
});

/** The project and the first page of its files (`filesNext`: the cursor for GET /:id/files). */
projectRoutes.get(
  "/:id",
  doc({
    summary: "Get a project and the first page of its files",
    responses: { 200: { description: "The project", schema: projectWithFiles } },
  }),
  async (c) => {
    const project = await getProject(c.env.DB, c.get("tenantId"), projectId(c.req.param("id")));
    if (!project) throw notFound("project");
    const page = pageOf(
      await projectFiles(c.env.DB, {
        tenantId: c.get("tenantId"),
        projectId: project.id,
        limit: PROMPT_PROJECT_FILES + 1,
      }),
      PROMPT_PROJECT_FILES,
      (f) => f.id,
    );
    return c.json({
      ...view(project),
      files: page.data.map((f) => ({ ...f, note: attachmentNote(f) })),
      filesNext: page.next,
    });
  },
);

projectRoutes.get(
  "/:id/files",
  doc({
    summary: "List a project's files",
    responses: { 200: { description: "A page", schema: listOf(z.looseObject({ id: z.string() })) } },
  }),
  query(filesQuery),
  async (c) => {
    const project = await getProject(c.env.DB, c.get("tenantId"), projectId(c.req.param("id")));
    if (!project) throw notFound("project");
    const { limit, cursor } = c.req.valid("query");
    const page = pageOf(
      await projectFiles(c.env.DB, {
        tenantId: c.get("tenantId"),
        projectId: project.id,
        limit: limit + 1,
        after: cursor,
      }),
      limit,
      (f) => f.id,
    );
    return c.json(listBody({ data: page.data.map((f) => ({ ...f, note: attachmentNote(f) })), next: page.next }));
  },
);

const projectFull = () => new ApiError(409, "conflict", PROJECT_FULL);

/** The caller's project with room for one more file: another tenant's, or none, is a 404; a full one a 409. */
async function projectWithRoom(c: { env: Env; get(k: "tenantId"): string; req: { param(k: "id"): string } }) {
  const tenantId = c.get("tenantId");
  const project = await getProject(c.env.DB, tenantId, projectId(c.req.param("id")));
  if (!project) throw notFound("project");
  if (!(await projectHasRoom(c.env.DB, tenantId, project.id))) throw projectFull();
  return { tenantId, project };
}

/**
 * Checked again once a file is ready: the project may have been deleted while the file came in, or
 * filled by uploads racing this one. Either way the file goes, as it does when the check itself
 * fails: a failed upload leaves nothing behind (a project file has no note).
 */
async function keepInProject(
  env: Env,
  { tenantId, projectId, row }: { tenantId: string; projectId: string; row: AttachmentRow },
) {
  const kept = await keepProjectFile(env.DB, { tenantId, projectId }).catch(async (err) => {
    await purgeAttachment(env, row);
    throw err;
  });
  if (kept !== "kept") {
    await purgeAttachment(env, row);
    throw kept === "gone" ? notFound("project") : projectFull();
  }
}

/** Whether the project is gone now; a failed read says it is not, and the caller's own error stands. */
const projectGone = (env: Env, { tenantId, projectId }: { tenantId: string; projectId: string }) =>
  getProject(env.DB, tenantId, projectId).then(
    (found) => found === null,
    () => false,
  );

/**
 * A project file's upload work, its failure told again once the project is asked. A delete of the
 * project landing while the work ran removes the file's row, bytes and open upload under it, so the
 * work fails in the file's own words (R2's "no such upload", bytes missing as a 500, the upload or
 * file not found): what went is the project, and the answer is its 404, as the same request sent a
 * moment later gets. Nothing of the file is left: the project's row goes only after its delete swept
 * the files it found (this one's row among them), and what the work wrote after that sweep it
 * purges itself (finishUpload).
 */
async function whileProjectLives<T>(
  env: Env,
  at: { tenantId: string; projectId: string },
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (await projectGone(env, at)) throw notFound("project");
    throw err;
  }
}

projectRoutes.post(
  "/:id/files",
  doc({
    summary: "Upload a project file (the body is its bytes)",
    rawBody: { description: "The file's bytes; Content-Length required" },
    responses: { 201: { description: "The file and its note", schema: uploadedFile } },
  }),
  query(z.strictObject({ name: NAME })),
  async (c) => {
    const { tenantId, project } = await projectWithRoom(c);
    const row = newRow({
      tenantId,
      conversationId: "",
      name: c.req.valid("query").name,
      type: declaredType(c.req.header("content-type")),
      status: "uploading",
      projectId: project.id,
    });
    const file = await whileProjectLives(c.env, { tenantId, projectId: project.id }, () =>
      storeUpload(c.env, { req: c.req.raw, row, stub: null }),
    );
    await keepInProject(c.env, { tenantId, projectId: project.id, row });
    return c.json(file, 201);
  },
);

// ---- multipart, for a file larger than one request allows (routes/multipart-upload.ts) ------

const multipart = multipartDocs({
  of: " of a project file",
  idField: "fileId",
  completed: { description: "The file and its note", schema: uploadedFile },
});

projectRoutes.post("/:id/files/uploads", doc(multipart.start), ...jsonBody(createUpload), async (c) => {
  const { tenantId, project } = await projectWithRoom(c);
  const { name, type } = c.req.valid("json");
  const { row, uploadId, minPartBytes } = await startUpload(c.env, {
    row: newRow({ tenantId, conversationId: "", name, type: type ?? null, status: "uploading", projectId: project.id }),
    // A project deleted since the check above may have swept its files before this row landed.
    gone: async () => ((await getProject(c.env.DB, tenantId, project.id)) ? null : notFound("project")),
  });
  return c.json({ fileId: row.id, uploadId, minPartBytes }, 201);
});

/** The project's open upload `:fileId`: the project is checked first, as every route of it does. */
async function projectUpload(c: { env: Env; get(k: "tenantId"): string; req: { param(k: "id" | "fileId"): string } }) {
  const tenantId = c.get("tenantId");
  const project = await getProject(c.env.DB, tenantId, projectId(c.req.param("id")));
  if (!project) throw notFound("project");
  // A delete of the project since the check above may have swept the upload's row.
  const open = await whileProjectLives(c.env, { tenantId, projectId: project.id }, () =>
    openUpload(c.env, { tenantId, id: c.req.param("fileId"), owned: (row) => row.projectId === project.id }),
  );
  return { tenantId, project, ...open };
}

projectRoutes.put("/:id/files/uploads/:fileId/parts/:part", doc(multipart.part), async (c) => {
  const { tenantId, project, upload } = await projectUpload(c);
  const part = await whileProjectLives(c.env, { tenantId, projectId: project.id }, () =>
    putPart(upload, { part: c.req.param("part"), req: c.req.raw }),
  );
  return c.json(part);
});

projectRoutes.post(
  "/:id/files/uploads/:fileId/complete",
  doc(multipart.complete),
  ...jsonBody(z.strictObject({ parts: uploadedParts })),
  async (c) => {
    const { tenantId, project, row, upload } = await projectUpload(c);
    const { parts } = c.req.valid("json");
    const file = await whileProjectLives(c.env, { tenantId, projectId: project.id }, () =>
      finishUpload(c.env, { row, stub: null, stored: () => completeParts(c.env.BUCKET, { upload, parts }) }),
    );
    await keepInProject(c.env, { tenantId, projectId: project.id, row });
    return c.json(file, 201);
  },
);

projectRoutes.delete("/:id/files/uploads/:fileId", doc(multipart.abort), async (c) => {
  const { tenantId, project, row } = await projectUpload(c);
  await purgeAttachment(c.env, row);
  // The project's delete took the upload meanwhile: answered as the same abort sent after it is.
  if (await projectGone(c.env, { tenantId, projectId: project.id })) throw notFound("project");
  return c.body(null, 204);
});

/** Deletes the project and its files; its conversations stay, detached (see deleteProject). */
projectRoutes.delete(
  "/:id",
  doc({
    summary: "Delete a project and its files",
    responses: { 204: { description: "Deleted", headers: cortexBookmarkAnswer } },
  }),
  async (c) => {
    const tenantId = c.get("tenantId");
    const id = projectId(c.req.param("id"));
    const project = await getProject(c.env.DB, tenantId, id);
    // No row: a delete cut short after the row went may have left files, tools or servers behind.
    if (project) await deleteProject(c.env, tenantId, project.id);
    else if (!(await finishProjectDelete(c.env, tenantId, id))) throw notFound("project");
    // Its files' pages were purged from the shard, file by file, each write naming its own bookmark:
    // the shard's primary position now is at or after all of them, as a conversation's DELETE answers.
    answerCortexBookmark(c, await (await cortexFor(c.env, tenantId)).primaryMark());
    return c.body(null, 204);
  },
);

/** Deletes one project file: bytes, extracted pages, row. */
projectRoutes.delete(
  "/:id/files/:fileId",
  doc({
    summary: "Delete a project file",
    responses: { 204: { description: "Deleted", headers: cortexBookmarkAnswer } },
  }),
  async (c) => {
    const tenantId = c.get("tenantId");
    const project = await getProject(c.env.DB, tenantId, projectId(c.req.param("id")));
    if (!project) throw notFound("project");
    const fileId = c.req.param("fileId");
    // A delete cut short left the row or its tombstone: this one completes it.
    const row = isId("att", fileId) ? await attachmentToDelete(c.env.DB, tenantId, fileId) : null;
    if (!row || row.projectId !== project.id) throw notFound("file");
    // Its pages' removal reached the shard: the answer carries where, as an attachment's delete does.
    answerCortexBookmark(c, await purgeAttachment(c.env, row));
    return c.body(null, 204);
  },
);
