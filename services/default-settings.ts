// Settings a tenant or a project gives every conversation it starts: how a tenant opts all its
// conversations into web search, or a project into another model. Stored as settings patches (the
// conversation settings' own keys); a new conversation's settings are the model's defaults, then
// the tenant's, then the project's, then the request's (durable-objects/conversation-create.ts).
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { projects, tenants } from "../db/schema";
import { settingsPatchSchema, type SettingsPatch } from "../core/settings";

/** A stored patch; one that no longer parses (a key since removed) counts as none. */
function parsed(json: string | null | undefined): SettingsPatch {
  if (!json) return {};
  try {
    const result = settingsPatchSchema.safeParse(JSON.parse(json));
    return result.success ? result.data : {};
  } catch {
    return {};
  }
}

/** The tenant's defaults, and the project's over them: one D1 round trip. */
export async function inheritedSettings(db: D1Database, tenantId: string, projectId?: string | null): Promise<{ tenant: SettingsPatch; project: SettingsPatch }> {
  const d = drizzle(db);
  const tenantQuery = d.select({ settings: tenants.settings }).from(tenants).where(eq(tenants.id, tenantId));
  if (!projectId) {
    const [row] = await tenantQuery;
    return { tenant: parsed(row?.settings), project: {} };
  }
  const [tenantRows, projectRows] = await d.batch([tenantQuery, d.select({ settings: projects.settings }).from(projects).where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId)))]);
  return { tenant: parsed(tenantRows[0]?.settings), project: parsed(projectRows[0]?.settings) };
}

export async function setTenantSettings(db: D1Database, tenantId: string, patch: SettingsPatch): Promise<void> {
  await drizzle(db).update(tenants).set({ settings: JSON.stringify(patch) }).where(eq(tenants.id, tenantId));
}

/** False when the project does not exist for this tenant. */
export async function setProjectSettings(db: D1Database, tenantId: string, projectId: string, patch: SettingsPatch): Promise<boolean> {
  const done = await drizzle(db)
    .update(projects)
    .set({ settings: JSON.stringify(patch), updatedAt: new Date().toISOString() })
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId)))
    .returning({ id: projects.id });
  return done.length > 0;
}

export { parsed as parseStoredSettings };
