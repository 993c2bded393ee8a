// Projects: files shared by several conversations. The prompt of a project's conversation lists
// the files by name and facts only; content always comes through the attachment tools.
import { and, count, desc, eq, gt, lt, lte, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { attachments, projects, tenants } from "../db/schema";
import { noteText } from "./attachments/formats/format";
import { attachmentNote, TOOLS_FOR } from "./attachments/note";
import { sortableId } from "../core/ids";
import type { SettingsPatch } from "../core/settings";
import { purgeAttachmentsOf } from "./attachments/delete";
import { MAX_PROJECT_FILES, toAttachment, type Attachment } from "./attachments/store";
import { deleteProjectMcpServers } from "./mcp/servers";
import { deleteProjectTools } from "./tools/tool-store";
import { nextProjectSettingsVersion, settingsVersionIs } from "./default-settings";

export type Project = typeof projects.$inferSelect;

/** The most projects one tenant may have (each is a row every project list pages through). */
export const MAX_PROJECTS = 500;

export { MAX_PROJECT_FILES };

/** What a file past MAX_PROJECT_FILES is refused with (a 409 conflict). */
export const PROJECT_FULL = `the project has ${MAX_PROJECT_FILES} files, the most it may have; delete one before uploading another`;

/**
 * The project and its settings in one insert: settings written after it could fail and leave a
 * project without them (a retry then making a second one). "limit" when the tenant has
 * MAX_PROJECTS already. `settingsVersion`: the tenant's settings version read before the settings
 * were checked over the tenant's; the project is made only while it is still that, and moves the
 * tenant's project settings version on in the same batch ("changed" when the tenant's settings were
 * written meanwhile: check again; another project's never refuse it).
 */
export async function createProject(
  db: D1Database,
  tenantId: string,
  made: { name: string; settings?: SettingsPatch },
): Promise<Project | "limit">;
export async function createProject(
  db: D1Database,
  tenantId: string,
  made: { name: string; settings: SettingsPatch; settingsVersion: number },
): Promise<Project | "limit" | "changed">;
export async function createProject(
  db: D1Database,
  tenantId: string,
  { name, settings = {}, settingsVersion }: { name: string; settings?: SettingsPatch; settingsVersion?: number },
): Promise<Project | "limit" | "changed"> {
  const now = new Date().toISOString();
  const row = {
    id: sortableId("proj"),
    tenantId,
    name,
    createdAt: now,
    updatedAt: now,
    settings: JSON.stringify(settings),
  };
  const versioned = settingsVersion === undefined ? undefined : { tenantId, version: settingsVersion };
  // INSERT … SELECT from the tenant's own row, so the cap is checked in the inserting statement
  // and concurrent creates cannot pass it together.
  const d = drizzle(db);
  const insert = d
    .insert(projects)
    .select((qb) =>
      qb
        .select({
          id: sql<string>`${row.id}`.as("id"),
          tenantId: tenants.id,
          name: sql<string>`${row.name}`.as("name"),
          createdAt: sql<string>`${row.createdAt}`.as("created_at"),
          updatedAt: sql<string>`${row.updatedAt}`.as("updated_at"),
          settings: sql<string>`${row.settings}`.as("settings"),
        })
        .from(tenants)
        .where(
          and(
            eq(tenants.id, tenantId),
            lt(d.select({ n: count() }).from(projects).where(eq(projects.tenantId, tenantId)), MAX_PROJECTS),
            versioned ? eq(tenants.settingsVersion, versioned.version) : undefined,
          ),
        ),
    )
    .returning({ id: projects.id });
  if (!versioned) return (await insert).length ? row : "limit";
  const [inserted, moved] = await d.batch([insert, nextProjectSettingsVersion(db, versioned)]);
  if (inserted.length) return row;
  // The tenant's settings version as read: what refused the project was the cap.
  return moved.length ? "limit" : "changed";
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

/**
 * A project's new name, settings or both in one UPDATE: a write for each could fail between them
 * and leave the settings changed and the name not. "missing" when there is no such project.
 * `settingsVersion` (with settings): the tenant's settings version read before the settings were
 * checked over the tenant's; the UPDATE lands only while it is still that, and moves the tenant's
 * project settings version on in the same batch ("changed" when the tenant's settings were written
 * meanwhile: check again; another project's never refuse it).
 */
export async function updateProject(
  db: D1Database,
  {
    tenantId,
    id,
    change,
    settingsVersion,
  }: { tenantId: string; id: string; change: { name?: string; settings?: SettingsPatch }; settingsVersion?: number },
): Promise<"updated" | "missing" | "changed"> {
  const versioned = settingsVersion === undefined ? undefined : { tenantId, version: settingsVersion };
  const d = drizzle(db);
  const update = d
    .update(projects)
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.settings !== undefined ? { settings: JSON.stringify(change.settings) } : {}),
      updatedAt: new Date().toISOString(),
    })
    .where(
      and(
        eq(projects.tenantId, tenantId),
        eq(projects.id, id),
        versioned ? settingsVersionIs(db, versioned) : undefined,
      ),
    )
    .returning({ id: projects.id });
  if (!versioned) return (await update).length ? "updated" : "missing";
  // One batch is one transaction, and both statements hold only under the tenant's settings version
  // as read: the row never changes without the project settings version moving on (for a project
  // that is gone it moves alone, which only makes a tenant settings write racing this one check again).
  const [updated, moved] = await d.batch([update, nextProjectSettingsVersion(db, versioned)]);
  if (updated.length) return "updated";
  return moved.length ? "missing" : "changed";
}

export const renameProject = (db: D1Database, { tenantId, id, name }: { tenantId: string; id: string; name: string }) =>
  updateProject(db, { tenantId, id, change: { name } });

const readyFiles = (db: D1Database, tenantId: string, projectId: string) =>
  drizzle(db)
    .select({ n: count() })
    .from(attachments)
    .where(
      and(eq(attachments.tenantId, tenantId), eq(attachments.projectId, projectId), eq(attachments.status, "ready")),
    );

/** Whether the project has room for one more file now (the early answer, before any bytes stream in). */
export async function projectHasRoom(db: D1Database, tenantId: string, projectId: string): Promise<boolean> {
  const [row] = await readyFiles(db, tenantId, projectId);
  return (row?.n ?? 0) < MAX_PROJECT_FILES;
}

/**
 * Keeps a file that just became ready: marks the project changed while it exists, in one
 * statement. "gone" when the project was deleted meanwhile: the caller purges the file. The cap
 * is held where the file became ready (finishAttachment makes a project's file ready only while
 * the project has room, so files racing for its last places never refuse one another); this
 * statement counts again all the same, and "limit" answers a project found past the cap however
 * it got there (a file made ready by a worker of an earlier release during a deploy), which the
 * caller purges too.
 */
export async function keepProjectFile(
  db: D1Database,
  { tenantId, projectId }: { tenantId: string; projectId: string },
): Promise<"kept" | "gone" | "limit"> {
  const touched = await drizzle(db)
    .update(projects)
    .set({ updatedAt: new Date().toISOString() })
    .where(
      and(
        eq(projects.tenantId, tenantId),
        eq(projects.id, projectId),
        lte(readyFiles(db, tenantId, projectId), MAX_PROJECT_FILES),
      ),
    )
    .returning({ id: projects.id });
  if (touched.length) return "kept";
  return (await getProject(db, tenantId, projectId)) ? "limit" : "gone";
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
        `More files than these ${files.length} belong to the project; the pages of their PDFs, once indexed, are found by memory_search {"query":"words or identifiers on the page"}, and the user can name a file by id.`,
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
 * lands). A crash before the row goes leaves the project for a second DELETE to finish; one after
 * it leaves what still names the project for finishProjectDelete. Its registered tools and MCP
 * servers go too. Its conversations stay, detached: their prompt no longer lists the project's
 * files, nor do they see the project's tools.
 */
export async function deleteProject(env: Env, tenantId: string, projectId: string): Promise<void> {
  await sweepProject(env, tenantId, projectId);
  await drizzle(env.DB)
    .delete(projects)
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId)));
  // A file, tool or server that landed while the delete ran (its route saw the project) goes too.
  await sweepProject(env, tenantId, projectId);
}

/**
 * Completes the delete of a project whose row is gone but which a DELETE cut short after that (a
 * `5xx`) left things of: sweeps the tenant's files, tools and MCP servers naming the id. False when
 * nothing of the tenant named it (an unknown id, another tenant's, a delete already complete). An id
 * is never reused, so what names it belonged to that deleted project (an upload that outlived the
 * row and failed to remove itself included).
 */
export async function finishProjectDelete(env: Env, tenantId: string, projectId: string): Promise<boolean> {
  return (await sweepProject(env, tenantId, projectId)) > 0;
}

/**
 * What names a project besides its row: its MCP servers, tools and files (bytes, pages, rows), each
 * removed; answers how many there were.
 */
async function sweepProject(env: Env, tenantId: string, projectId: string): Promise<number> {
  const servers = await deleteProjectMcpServers(env.DB, tenantId, projectId);
  const tools = await deleteProjectTools(env.DB, tenantId, projectId);
  return servers + tools + (await purgeAttachmentsOf(env, tenantId, { projectId }));
}
