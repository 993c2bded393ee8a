// Settings a tenant or a project gives every conversation it starts: how a tenant opts all its
// conversations into web search, or a project into another model. Stored as settings patches (the
// conversation settings' own keys); a new conversation's settings are the model's defaults, then
// the tenant's, then the project's, then the request's (durable-objects/conversation-create.ts); a
// layer that names another model moves the settings below to it as a settings change would: the
// figures that were the old model's defaults follow the new model, a user's own are kept where the
// model takes them (settingsFromLayers).
import { and, eq, exists, ne, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { projects, tenants } from "../db/schema";
import type { ModelEntry } from "../core/models/catalog";
import { findModel } from "../core/models/lookup";
import type { ModelEnv } from "../core/model-provider";
import {
  defaultSettings,
  fitToModel,
  leavesPromptRoom,
  mergeSettings,
  modelDefaults,
  reserveWithin,
  sameModel,
  settingsAfterModelChange,
  settingsPatchSchema,
  type Settings,
  type SettingsPatch,
} from "../core/settings";
import { sessionDatabase } from "./d1-session-database";
import { checkSettings, defaultModelEntry, resolveSettingsModel, resolveTurnModel } from "./models/resolve";

/**
 * A stored patch. A key that no longer passes (one since removed, a value below a bound since
 * raised: a window under MIN_CONTEXT_WINDOW_TOKENS) is left out alone, so the rest still holds; one
 * that does not parse at all counts as none.
 */
function parsed(json: string | null | undefined): SettingsPatch {
  if (!json) return {};
  try {
    const raw: unknown = JSON.parse(json);
    const result = settingsPatchSchema.safeParse(raw);
    if (result.success) return result.data;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
    const stale = new Set<PropertyKey>();
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") for (const k of issue.keys) stale.add(k);
      else if (issue.path.length) stale.add(issue.path[0]);
    }
    const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => !stale.has(k)));
    const again = settingsPatchSchema.safeParse(rest);
    return again.success ? again.data : {};
  } catch {
    return {};
  }
}

/** What a new conversation inherits: the tenant's defaults, and its project's over them. */
export interface InheritedSettings {
  tenant: SettingsPatch;
  project: SettingsPatch;
}

/**
 * The tenant's defaults, and the project's over them: one D1 round trip. Null when `projectId` names
 * no project of the tenant (one deleted since the caller checked it): a conversation made without
 * its settings would be one in no project that names it.
 */
export async function inheritedSettings(db: D1Database, tenantId: string): Promise<InheritedSettings>;
export async function inheritedSettings(
  db: D1Database,
  tenantId: string,
  projectId: string | null | undefined,
): Promise<InheritedSettings | null>;
export async function inheritedSettings(
  db: D1Database,
  tenantId: string,
  projectId?: string | null,
): Promise<InheritedSettings | null> {
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
  const [project] = projectRows;
  if (!project) return null;
  return { tenant: parsed(tenantRows[0]?.settings), project: parsed(project.settings) };
}

/**
 * Writes the tenant's settings unchecked, moving its settings version on (a concurrent checked write
 * then checks again): for a tenant set up by code. A request's goes through replaceTenantSettings.
 */
export async function setTenantSettings(db: D1Database, tenantId: string, patch: SettingsPatch): Promise<void> {
  await drizzle(db)
    .update(tenants)
    .set({ settings: JSON.stringify(patch), settingsVersion: sql`${tenants.settingsVersion} + 1` })
    .where(eq(tenants.id, tenantId));
}

export { parsed as parseStoredSettings };

/**
 * How many times a checked settings write tries: each finds the settings it is checked against (a
 * project's write the tenant's; the tenant's its projects') as a write made meanwhile left them and
 * checks again; past these it answers "changed".
 */
export const SETTINGS_ATTEMPTS = 3;

/**
 * Read at the primary: a replica behind it would hold an old settings version, and the write
 * conditional on it would find it changed at every try.
 */
const atPrimary = (db: D1Database) => drizzle(sessionDatabase(db, db.withSession("first-primary")));

/** The tenant's settings and their version as read now, before a check that a write then depends on. */
export async function tenantSettingsAsRead(
  db: D1Database,
  tenantId: string,
): Promise<{ settings: SettingsPatch; version: number }> {
  const [row] = await atPrimary(db)
    .select({ settings: tenants.settings, version: tenants.settingsVersion })
    .from(tenants)
    .where(eq(tenants.id, tenantId));
  return { settings: parsed(row?.settings), version: row?.version ?? 0 };
}

/**
 * The condition of a project's settings write (its UPDATE or INSERT … SELECT): the tenant's settings
 * version is still `version`, the one read before the project's settings were checked.
 */
export const settingsVersionIs = (db: D1Database, { tenantId, version }: { tenantId: string; version: number }) =>
  exists(
    drizzle(db)
      .select({ id: tenants.id })
      .from(tenants)
      .where(and(eq(tenants.id, tenantId), eq(tenants.settingsVersion, version))),
  );

/**
 * Moves the tenant's project settings version on, only while its settings version still is
 * `version`: in one batch after a project's settings write under settingsVersionIs, the two land
 * together or neither does (no row answered: the tenant's settings changed meanwhile). It moves by
 * one from whatever it is: another project's write made meanwhile does not refuse this one, only a
 * tenant settings write checked over the projects as they were (replaceTenantSettings).
 */
export const nextProjectSettingsVersion = (
  db: D1Database,
  { tenantId, version }: { tenantId: string; version: number },
) =>
  drizzle(db)
    .update(tenants)
    .set({ projectSettingsVersion: sql`${tenants.projectSettingsVersion} + 1` })
    .where(and(eq(tenants.id, tenantId), eq(tenants.settingsVersion, version)))
    .returning({ id: tenants.id });

/** A project that could start no conversation over some tenant settings, and why. */
export interface RefusedProject {
  id: string;
  name: string;
  message: string;
}

/**
 * Replaces the tenant's settings (PUT /v1/settings) when every project of the tenant can still start
 * a conversation over them: "refused" names the first that could not. A project's settings are
 * checked over the tenant's when they are written, so replacing the tenant's could otherwise leave a
 * project whose inherited settings refuse every conversation (a ratio pair split between the two).
 * The write lands only while the tenant's settings version and project settings version are the
 * ones read with the projects: a project's settings written meanwhile moved the second, and the
 * projects are checked again ("changed" when they kept changing).
 */
export async function replaceTenantSettings(
  env: ModelEnv & { DEFAULT_MODEL?: string; DB: D1Database },
  { tenantId, settings }: { tenantId: string; settings: SettingsPatch },
): Promise<{ kind: "set" } | { kind: "refused"; project: RefusedProject } | { kind: "changed" }> {
  for (let attempt = 0; attempt < SETTINGS_ATTEMPTS; attempt++) {
    const d = atPrimary(env.DB);
    // One batch reads them as of one moment: the versions, and the projects they stand for.
    const [tenantRows, projectRows] = await d.batch([
      d
        .select({ version: tenants.settingsVersion, projectsVersion: tenants.projectSettingsVersion })
        .from(tenants)
        .where(eq(tenants.id, tenantId)),
      d
        .select({ id: projects.id, name: projects.name, settings: projects.settings })
        .from(projects)
        .where(and(eq(projects.tenantId, tenantId), ne(projects.settings, "{}"))),
    ]);
    const version = tenantRows[0]?.version ?? 0;
    const projectsVersion = tenantRows[0]?.projectsVersion ?? 0;
    for (const row of projectRows) {
      const made = await settingsFromLayers(env, { tenant: settings, project: parsed(row.settings) });
      if (!made.ok) return { kind: "refused", project: { id: row.id, name: row.name, message: made.message } };
    }
    // Moving settingsVersion on makes a project's write checked over the old settings check again.
    const written = await drizzle(env.DB)
      .update(tenants)
      .set({ settings: JSON.stringify(settings), settingsVersion: version + 1 })
      .where(
        and(
          eq(tenants.id, tenantId),
          eq(tenants.settingsVersion, version),
          eq(tenants.projectSettingsVersion, projectsVersion),
        ),
      )
      .returning({ id: tenants.id });
    if (written.length) return { kind: "set" };
  }
  return { kind: "changed" };
}

/** Settings in the layers a new conversation takes them from, lowest first (each optional but the tenant's). */
export interface SettingsLayers {
  /** The tenant's, stored: inherited. */
  tenant: SettingsPatch;
  /** Its project's, stored: inherited. */
  project?: SettingsPatch;
  /** What the caller sends now: checked strictly. */
  request?: SettingsPatch;
}

/** `own`: every key a layer applied so far set (a user's own value, never a model's default). */
type MadeSettings = { ok: true; settings: Settings; entry: ModelEntry; own: SettingsPatch };
/** The figures that belong to a model: a user's own value stays on another model, clamped to what it takes. */
const FIGURES = ["contextWindowTokens", "outputReserveTokens", "charsPerToken"] as const;
type NewSettings = MadeSettings | { ok: false; message: string };

/**
 * One layer over the settings below it. A model is stored as the layer names it (a pinned, dated id
 * stays pinned, as a PATCH keeps it, and is what the turns send). A layer naming another model than
 * the one below moves them to it as a settings change does (core/settings.ts settingsAfterModelChange: the old model's
 * default figures follow the new model), a figure a layer below set staying as the user's own
 * (within what the model takes: a tenant's window cap holds). `strict`: the caller's own keys, a
 * retired or unknown model a 400 and
 * every key left for the checks; otherwise stored and inherited, never refusing: a retired model
 * (or fallback) moves to its replacement, one that cannot be resolved leaves the model below, and
 * keys the model does not take fall back to its defaults.
 */
async function overLayer(
  env: ModelEnv,
  below: MadeSettings,
  { layer, strict }: { layer: SettingsPatch; strict: boolean },
): Promise<NewSettings> {
  let patch = layer;
  const fallback = !strict && patch.refusalFallbackModel ? findModel(patch.refusalFallbackModel) : null;
  if (fallback?.kind === "retired") patch = { ...patch, refusalFallbackModel: fallback.replacement.id };
  let to = below.entry;
  if (patch.model !== undefined && strict) {
    const named = await resolveSettingsModel(env, { id: patch.model });
    if (!named.ok) return named;
    to = named.entry;
  } else if (patch.model !== undefined) {
    const resolved = await resolveTurnModel(env, patch.model);
    if (resolved.ok) to = resolved.entry;
    // A pinned id (a current model's alias) stays as named; a retired one names its replacement.
    patch = { ...patch, model: resolved.ok && !resolved.movedFrom ? patch.model : to.id };
  }
  const keep = strict ? patch : {};
  let settings =
    to.id === below.entry.id
      ? fitToModel(mergeSettings(below.settings, patch), to, keep)
      : settingsAfterModelChange(below.settings, { patch: { model: to.id, ...patch }, from: below.entry, to, keep });
  if (to.id !== below.entry.id) {
    // A figure a layer below set is the user's own (whatever its value, the old model's default or
    // not): it stays on the model this layer names, within what that model takes.
    const own: Partial<Settings> = {};
    for (const key of FIGURES)
      if (below.own[key] !== undefined && patch[key] === undefined) own[key] = below.settings[key];
    const fallback = modelDefaults(to);
    if (own.contextWindowTokens !== undefined)
      own.contextWindowTokens = Math.min(own.contextWindowTokens, fallback.contextWindowTokens);
    // A reserve the window left cannot hold beside the prompt: the model's own (within a quarter of
    // that window; fitToModel cuts one past the model's maximum). A PATCH moves it alike
    // (core/settings.ts unnamedAfterModelChange).
    const window = own.contextWindowTokens ?? settings.contextWindowTokens;
    if (
      own.outputReserveTokens !== undefined &&
      !leavesPromptRoom({ contextWindowTokens: window, outputReserveTokens: own.outputReserveTokens })
    )
      own.outputReserveTokens = reserveWithin(to, window);
    settings = fitToModel({ ...settings, ...own }, to, keep);
  }
  return { ok: true, settings, entry: to, own: { ...below.own, ...patch } };
}

/**
 * A new conversation's settings: the model's defaults, then the tenant's, then its project's (both
 * inherited), then the request's (checked strictly), each layer over the one below (see overLayer).
 * The one path for conversations, channels, GET/PUT /v1/settings and the project routes.
 */
export async function settingsFromLayers(
  env: ModelEnv & { DEFAULT_MODEL?: string },
  layers: SettingsLayers,
): Promise<NewSettings> {
  const entry = await defaultModelEntry(env);
  let made: MadeSettings = { ok: true, settings: defaultSettings(entry), entry, own: {} };
  const steps = [
    { layer: layers.tenant, strict: false },
    { layer: layers.project ?? {}, strict: false },
    { layer: layers.request ?? {}, strict: true },
  ];
  for (const step of steps) {
    const next = await overLayer(env, made, step);
    if (!next.ok) return next;
    made = next;
  }
  let { settings } = made;
  // An inherited fallback that has become the model itself (the two moved to one replacement, an
  // alias of it, a model named above it) is dropped; the request's own is checked.
  const own = layers.request?.refusalFallbackModel;
  if (
    own === undefined &&
    settings.refusalFallbackModel !== null &&
    sameModel(settings.refusalFallbackModel, settings.model)
  )
    settings = { ...settings, refusalFallbackModel: null };
  const checked = await checkSettings(env, settings);
  return checked.ok ? { ok: true, settings, entry: checked.entry, own: made.own } : checked;
}

/** A new conversation's settings over `inherited` (the tenant's) and the request's (see settingsFromLayers). */
export function settingsForNewConversation(
  env: ModelEnv & { DEFAULT_MODEL?: string },
  inherited: SettingsPatch,
  request: SettingsPatch = {},
): Promise<NewSettings> {
  return settingsFromLayers(env, { tenant: inherited, request });
}

/**
 * A project's settings as it is written (POST / PATCH /v1/projects): its own keys checked strictly
 * over the tenant's, as a request's would be, then what creation applies (the project as an
 * inherited layer) is what is answered, so a project is accepted exactly when its conversations can
 * be made.
 */
export async function projectSettingsChecked(
  env: ModelEnv & { DEFAULT_MODEL?: string },
  { tenant, project }: { tenant: SettingsPatch; project: SettingsPatch },
): Promise<NewSettings> {
  const asked = await settingsFromLayers(env, { tenant, request: project });
  return asked.ok ? settingsFromLayers(env, { tenant, project }) : asked;
}
