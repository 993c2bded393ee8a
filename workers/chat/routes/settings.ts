// /v1/settings: the settings every new conversation of the tenant starts with (over the model's
// defaults, under a project's and the request's). PUT replaces the whole set; each key is a
// conversation setting, checked as a conversation's would be.
import { Hono } from "hono";
import { z } from "zod";
import { settingsPatchSchema, type Settings, type SettingsPatch } from "../../../core/settings";
import {
  inheritedSettings,
  replaceTenantSettings,
  settingsForNewConversation,
} from "../../../services/default-settings";
import { ApiError, badRequest } from "../errors";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";
import { doc } from "../openapi/registry";

export const settingsRoutes = new Hono<AppEnv>();

const settingsView = z
  .looseObject({ settings: z.looseObject({}), effective: z.looseObject({ model: z.string() }) })
  .meta({
    id: "DefaultSettings",
    description:
      "`settings`: what was set; `effective`: every setting a new conversation gets from it (with the model's defaults).",
  });

/**
 * A settings write (the tenant's, or a project's) that found the other changed by other requests at
 * every check: nothing was written.
 */
export const settingsChangedMeanwhile = () =>
  new ApiError(
    409,
    "conflict",
    "settings: the tenant's or its projects' settings kept changing while these were checked; send it again",
  );

/** The settings a patch over `under` (inherited) gives a new conversation; a 400 naming the field when the patch's own keys are not valid. */
export async function effectiveSettings(env: Env, under: SettingsPatch, patch: SettingsPatch): Promise<Settings> {
  const made = await settingsForNewConversation(env, under, patch);
  if (!made.ok) throw badRequest(made.message);
  return made.settings;
}

settingsRoutes.get(
  "/",
  doc({
    summary: "The settings every new conversation of the tenant starts with",
    responses: { 200: { description: "The tenant's settings", schema: settingsView } },
  }),
  async (c) => {
    const { tenant } = await inheritedSettings(c.env.DB, c.get("tenantId"));
    // What is stored is inherited: shown as new conversations get it (a retired model moved on), never refused.
    return c.json({ settings: tenant, effective: await effectiveSettings(c.env, tenant, {}) });
  },
);

settingsRoutes.put(
  "/",
  doc({
    summary:
      "Replace the settings every new conversation of the tenant starts with (existing conversations keep theirs)",
    responses: { 200: { description: "The tenant's settings", schema: settingsView } },
  }),
  ...jsonBody(z.strictObject({ settings: settingsPatchSchema })),
  async (c) => {
    const { settings } = c.req.valid("json");
    const effective = await effectiveSettings(c.env, {}, settings);
    // Every project must still start conversations over the new settings: else refused, nothing
    // written. A project's settings written meanwhile are checked too (replaceTenantSettings).
    const replaced = await replaceTenantSettings(c.env, { tenantId: c.get("tenantId"), settings });
    if (replaced.kind === "refused") {
      const { id, name, message } = replaced.project;
      throw badRequest(
        `settings: project ${id} ("${name}") could start no conversation over these settings (${message}); change its settings first`,
      );
    }
    if (replaced.kind === "changed") throw settingsChangedMeanwhile();
    return c.json({ settings, effective });
  },
);
