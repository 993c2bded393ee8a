// Projects: files shared by several conversations. The prompt of a project's conversation lists
// the files by name and facts only; content always comes through the attachment tools.
import { and, desc, eq, gt, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { attachments, projects } from "../db/schema";
import { noteText } from "./attachments/formats/format";
import { attachmentNote, TOOLS_FOR } from "./attachments/note";
import { sortableId } from "../core/ids";
import type { SettingsPatch } from "../core/settings";
import { purgeAttachmentsOf } from "./attachments/delete";
import { toAttachment, type Attachment } from "./attachments/store";
import { deleteProjectMcpServers } from "./mcp/servers";
import { deleteProjectTools } from "./tools/tool-store";

export type Project = typeof projects.$inferSelect;

/**
 * The project and its settings in one insert: settings written after it could fail and leave a
 * project without them (a retry then making a second one).
 */
export async function createProject(
  db: D1Database,
  tenantId: string,
  { name, settings = {} }: { name: string; settings?: SettingsPatch },
): Promise<Project> {
  const now = new Date().toISOString();
  const row = {
    id: sortableId("proj"),
    tenantId,
    name,
    createdAt: now,
    updatedAt: now,
    settings: JSON.stringify(settings),
  };
  await drizzle(db).insert(projects).values(row);
  return row;
}

export async function getProject(db: D1Database, tenantId: string, id: string): Promise<Project | null> {
  return (
    (await drizzle(db)
      .select()
      .from(projects)
      .where(and(eq(projects.tenantId, tenantId), eq(projects.id, id)))
      .get()) ?? null
  );
}

/** Newest first; `before` is the last project id of the previous page. */
export async function listProjects(
  db: D1Database,
  { tenantId, limit, before }: { tenantId: string; limit: number; before?: string },
): Promise<Project[]> {
  return drizzle(db)
    .select()
    .from(projects)
    .where(and(eq(projects.tenantId, tenantId), before ? lt(projects.id, before) : undefined))
    .orderBy(desc(projects.id))
    .limit(limit);
}

export async function renameProject(
  db: D1Database,
  { tenantId, id, name }: { tenantId: string; id: string; name: string },
): Promise<void> {
  await drizzle(db)
    .update(projects)
    .set({ name, updatedAt: new Date().toISOString() })
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, id)));
}

/** Marks the project changed; false when it no longer exists (deleted meanwhile). */
export async function touchProject(db: D1Database, tenantId: string, id: string): Promise<boolean> {
  const touched = await drizzle(db)
    .update(projects)
    .set({ updatedAt: new Date().toISOString() })
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, id)))
    .returning({ id: projects.id });
  return touched.length > 0;
}

/** How many of a project's files its conversations' system prompt lists (the rest are paged by the API). */
export const PROMPT_PROJECT_FILES = 200;

/** A project's ready files in upload (id) order, `limit` of them after the id `after`. */
export async function projectFiles(
  db: D1Database,
  {
    tenantId,
    projectId,
    limit = PROMPT_PROJECT_FILES,
    after,
  }: { tenantId: string; projectId: string; limit?: number; after?: string },
): Promise<Attachment[]> {
  return (await filesQuery(db, { tenantId, projectId, limit, after })).map(toAttachment);
}

const filesQuery = (
  db: D1Database,
  { tenantId, projectId, limit, after }: { tenantId: string; projectId: string; limit: number; after?: string },
) =>
  drizzle(db)
    .select()
    .from(attachments)
    .where(
      and(
        eq(attachments.tenantId, tenantId),
        eq(attachments.projectId, projectId),
        eq(attachments.status, "ready"),
        after ? gt(attachments.id, after) : undefined,
      ),
    )
    .orderBy(attachments.id)
    .limit(limit);

/**
 * The project and its first `limit` files in one D1 round trip: a turn of a project's conversation
 * reads both before its first model call, so two sequential reads would be on its critical path.
 */
export async function projectWithFiles(
  db: D1Database,
  { tenantId, id, limit }: { tenantId: string; id: string; limit: number },
): Promise<{ project: Project; files: Attachment[] } | null> {
  const d = drizzle(db);
  const [found, files] = await d.batch([
    d
      .select()
      .from(projects)
      .where(and(eq(projects.tenantId, tenantId), eq(projects.id, id))),
    filesQuery(db, { tenantId, projectId: id, limit }),
  ]);
  return found[0] ? { project: found[0], files: files.map(toAttachment) } : null;
}

/**
 * The prompt block of a project's files: their notes (names, facts, tools), in upload order. Past
 * `PROMPT_PROJECT_FILES` the block says that more exist rather than dropping them silently.
 */
export function projectFilesBlock(project: Project, files: Attachment[], more = false): string {
  // The name is the tenant's text inside the platform's block: escaped and on one line, as a file's.
  const name = noteText(project.name);
  if (!files.length) return `<project name="${name}" id="${project.id}">\nNo files yet.\n</project>`;
  const tail = more
    ? [
        `More files than these ${files.length} belong to the project; their pages are found by memory_search (kind page) once read, and the user can name one by id.`,
      ]
    : [];
  return [
    `<project name="${name}" id="${project.id}">`,
    `Files shared by this project's conversations (references only; read them with the tools named):`,
    ...files.map((f) => attachmentNote(f)),
    ...tail,
    "</project>",
  ].join("\n");
}

/** The tools a project's files need, so its conversations can read them without activating each. */
export const projectTools = (files: Attachment[]): string[] =>
  [...new Set(files.flatMap((f) => TOOLS_FOR[f.facts.kind]))].sort();

/**
 * Deletes a project: its files (bytes, pages, rows), then the project row, then its files again,
 * so a file uploaded while the delete ran is caught (the upload re-checks the project after it
 * lands). A crash before the row goes leaves the project for a second DELETE to finish. Its
 * registered tools and MCP servers go too. Its conversations stay, detached: their prompt no longer
 * lists the project's files, nor do they see the project's tools.
 */
export async function deleteProject(env: Env, tenantId: string, projectId: string): Promise<void> {
  const purgeFiles = () => purgeAttachmentsOf(env, tenantId, { projectId });
  const dropTools = async () => {
    await deleteProjectMcpServers(env.DB, tenantId, projectId);
    await deleteProjectTools(env.DB, tenantId, projectId);
  };
  await purgeFiles();
  await dropTools();
  await drizzle(env.DB)
    .delete(projects)
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId)));
  // A tool or server registered while the delete ran (its route saw the project) goes too.
  await dropTools();
  await purgeFiles();
}
