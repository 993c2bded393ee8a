// /v1/settings: the settings every new conversation of the tenant starts with (over the model's
// defaults, under a project's and the request's). PUT replaces the whole set; each key is a
// conversation setting, checked as a conversation's would be.
import { Hono } from "hono";
import { z } from "zod";
import { defaultSettings, mergeSettings, settingsPatchSchema, type Settings, type SettingsPatch } from "../../../core/settings";
import { inheritedSettings, setTenantSettings } from "../../../services/default-settings";
import { checkSettings, defaultModelEntry, resolveSettingsModel } from "../../../services/models/resolve";
import { badRequest } from "../errors";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";
import { doc } from "../openapi/registry";

export const settingsRoutes = new Hono<AppEnv>();

const settingsView = z
  .looseObject({ settings: z.looseObject({}), effective: z.looseObject({ model: z.string() }) })
  .meta({ id: "DefaultSettings", description: "`settings`: what was set; `effective`: every setting a new conversation gets from it (with the model's defaults)." });

/** The settings a patch over `under` gives, checked against their model; a 400 message when they are not valid. */
export async function effectiveSettings(env: Env, under: SettingsPatch, patch: SettingsPatch): Promise<Settings> {
  const merged: SettingsPatch = { ...under, ...patch };
  let base = await defaultModelEntry(env);
  if (merged.model) {
    const named = await resolveSettingsModel(env, merged.model);
    if (!named.ok) throw badRequest(named.message);
    base = named.entry;
  }
  const settings = mergeSettings(defaultSettings(base), merged);
  const checked = await checkSettings(env, settings);
  if (!checked.ok) throw badRequest(checked.message);
  return settings;
}

settingsRoutes.get("/", doc({ summary: "The settings every new conversation of the tenant starts with", responses: { 200: { description: "The tenant's settings", schema: settingsView } } }), async (c) => {
  const { tenant } = await inheritedSettings(c.env.DB, c.get("tenantId"));
  return c.json({ settings: tenant, effective: await effectiveSettings(c.env, {}, tenant) });
});

settingsRoutes.put(
  "/",
  doc({ summary: "Replace the settings every new conversation of the tenant starts with (existing conversations keep theirs)", responses: { 200: { description: "The tenant's settings", schema: settingsView } } }),
  ...jsonBody(z.strictObject({ settings: settingsPatchSchema })),
  async (c) => {
    const { settings } = c.req.valid("json");
    const effective = await effectiveSettings(c.env, {}, settings);
    await setTenantSettings(c.env.DB, c.get("tenantId"), settings);
    return c.json({ settings, effective });
  },
);
