// Settings a tenant or a project gives every conversation it starts: how a tenant opts all its
// conversations into web search, or a project into another model. Stored as settings patches (the
// conversation settings' own keys); a new conversation's settings are the model's defaults, then
// the tenant's, then the project's, then the request's (durable-objects/conversation-create.ts).
import { and, eq, ne } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { projects, tenants } from "../db/schema";
import type { ModelEntry } from "../core/models/catalog";
import { findModel } from "../core/models/lookup";
import type { ModelEnv } from "../core/model-provider";
import {
  defaultSettings,
  fitToModel,
  mergeSettings,
  settingsAfterModelChange,
  settingsPatchSchema,
  type Settings,
  type SettingsPatch,
} from "../core/settings";
import { checkSettings, defaultModelEntry, resolveSettingsModel, resolveTurnModel } from "./models/resolve";

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
export async function inheritedSettings(
  db: D1Database,
  tenantId: string,
  projectId?: string | null,
): Promise<{ tenant: SettingsPatch; project: SettingsPatch }> {
  const d = drizzle(db);
  const tenantQuery = d.select({ settings: tenants.settings }).from(tenants).where(eq(tenants.id, tenantId));
  if (!projectId) {
    const [row] = await tenantQuery;
    return { tenant: parsed(row?.settings), project: {} };
  }
  const [tenantRows, projectRows] = await d.batch([
    tenantQuery,
    d
      .select({ settings: projects.settings })
      .from(projects)
      .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId))),
  ]);
  return { tenant: parsed(tenantRows[0]?.settings), project: parsed(projectRows[0]?.settings) };
}

export async function setTenantSettings(db: D1Database, tenantId: string, patch: SettingsPatch): Promise<void> {
  await drizzle(db)
    .update(tenants)
    .set({ settings: JSON.stringify(patch) })
    .where(eq(tenants.id, tenantId));
}

/** False when the project does not exist for this tenant. */
export async function setProjectSettings(
  db: D1Database,
  { tenantId, projectId, patch }: { tenantId: string; projectId: string; patch: SettingsPatch },
): Promise<boolean> {
  const done = await drizzle(db)
    .update(projects)
    .set({ settings: JSON.stringify(patch), updatedAt: new Date().toISOString() })
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId)))
    .returning({ id: projects.id });
  return done.length > 0;
}

export { parsed as parseStoredSettings };

/**
 * The first of the tenant's projects that could start no conversation under `tenant` (new tenant
 * settings), with the reason; null when every project can. A project's settings are checked over
 * the tenant's when they are written, so replacing the tenant's could otherwise leave a project
 * whose inherited settings refuse every conversation (a ratio pair split between the two).
 */
export async function projectRefusedUnder(
  env: ModelEnv & { DEFAULT_MODEL?: string; DB: D1Database },
  { tenantId, tenant }: { tenantId: string; tenant: SettingsPatch },
): Promise<{ id: string; name: string; message: string } | null> {
  const rows = await drizzle(env.DB)
    .select({ id: projects.id, name: projects.name, settings: projects.settings })
    .from(projects)
    .where(and(eq(projects.tenantId, tenantId), ne(projects.settings, "{}")));
  for (const row of rows) {
    const made = await settingsForNewConversation(env, { ...tenant, ...parsed(row.settings) });
    if (!made.ok) return { id: row.id, name: row.name, message: made.message };
  }
  return null;
}

/**
 * A new conversation's settings: the model's defaults, the inherited settings (the tenant's, then
 * its project's) over them, and the request's over those. What is inherited never refuses a
 * conversation: a retired inherited model (or fallback model) moves to its replacement, and when the request names
 * another model the inherited model-dependent settings follow it (as a settings change would).
 * The request's own keys are checked strictly: a retired model it names is a 400.
 */
export async function settingsForNewConversation(
  env: ModelEnv & { DEFAULT_MODEL?: string },
  inherited: SettingsPatch,
  request: SettingsPatch = {},
): Promise<{ ok: true; settings: Settings; entry: ModelEntry } | { ok: false; message: string }> {
  let from = await defaultModelEntry(env);
  // An inherited fallback model that has since retired moves to its replacement, as the model does.
  const fallback = inherited.refusalFallbackModel ? findModel(inherited.refusalFallbackModel) : null;
  if (fallback?.kind === "retired") inherited = { ...inherited, refusalFallbackModel: fallback.replacement.id };
  if (inherited.model) {
    const resolved = await resolveTurnModel(env, inherited.model);
    if (resolved.ok) from = resolved.entry;
  }
  // Inherited keys the model no longer takes (its retirement moved it on) fall back to its defaults.
  const base = fitToModel(mergeSettings(defaultSettings(from), { ...inherited, model: from.id }), from);
  let settings = mergeSettings(base, request);
  let entry = from;
  if (request.model && request.model !== from.id) {
    const named = await resolveSettingsModel(env, { id: request.model });
    if (!named.ok) return named;
    entry = named.entry;
    settings = settingsAfterModelChange(base, { patch: request, from, to: entry });
  }
  // ...and one that has become the model itself (the two moved to one replacement) is dropped.
  if (request.refusalFallbackModel === undefined && settings.refusalFallbackModel === settings.model)
    settings = { ...settings, refusalFallbackModel: null };
  const checked = await checkSettings(env, settings);
  return checked.ok ? { ok: true, settings, entry: checked.entry } : checked;
}
