// GET /v1/models: the model catalog (core/models/catalog.ts) as the API shows it, and one model by
// id or alias. A model the catalog does not list is looked up in Anthropic's Models API, as a
// settings change would, and shown with the conservative limits it would run with.
import { Hono } from "hono";
import { z } from "zod";
import { MODELS, RETIRED_MODELS, type ModelEntry, type RetiredModel } from "../../../core/models/catalog";
import { findModel, utcDay } from "../../../core/models/lookup";
import { defaultModelEntry, resolveSettingsModel } from "../../../services/models/resolve";
import { notFound } from "../errors";
import { intParam, query } from "../validate";
import { listBody, pageOf } from "../paging";
import type { AppEnv } from "../types";
import { doc } from "../openapi/registry";
import { modelListSchema, modelSchema } from "../openapi/schemas";
import { modelIdSchema } from "../../../core/settings";

export const modelRoutes = new Hono<AppEnv>();

/**
 * One entry as the API shows it; `status` on `day`: a deprecated model retires on its day, and is
 * then shown as the retired ones are (retiredOn its retiresOn, the replacement it leads to).
 */
export function modelView(entry: ModelEntry, day: string, defaultModel: string) {
  const found = findModel(entry.id, day);
  if (found.kind === "retired")
    return retiredView({
      id: entry.id,
      aliases: entry.aliases,
      name: entry.name,
      status: "retired",
      retiredOn: found.retiredOn,
      replacement: found.replacement.id,
      sources: entry.sources,
    });
  return {
    id: entry.id,
    aliases: entry.aliases,
    name: entry.name,
    line: entry.line,
    default: entry.id === defaultModel,
    status: entry.status,
    deprecatedOn: entry.deprecatedOn ?? null,
    retiresOn: entry.retiresOn ?? null,
    replacement: entry.replacement ?? null,
    contextWindowTokens: entry.contextWindow,
    maxOutputTokens: entry.maxOutput,
    thinking: {
      modes: entry.thinking.accepts,
      default: entry.thinking.whenOmitted,
      display: entry.thinking.display,
      betweenToolCallsInThinking: entry.thinking.progressInThinking,
    },
    effort: entry.effort,
    prefill: entry.prefill,
    samplingParameters: entry.sampling,
    forcedToolChoice: entry.forcedToolChoice,
    tokenizerRatio: entry.tokenizerRatio,
    minCacheTokens: entry.minCacheTokens,
    maxImagesPerRequest: entry.maxImages,
    serverTools: entry.serverTools.length > 0,
    serverToolNames: entry.serverTools,
    prices: entry.prices ? { currency: "USD", per: "million tokens", ...entry.prices } : null,
    sources: entry.sources,
  };
}

function retiredView(m: RetiredModel) {
  return {
    id: m.id,
    aliases: m.aliases,
    name: m.name,
    line: null,
    default: false,
    status: "retired",
    retiredOn: m.retiredOn,
    replacement: m.replacement,
    contextWindowTokens: null,
    maxOutputTokens: null,
    prices: null,
    sources: m.sources,
  };
}

/** The catalog's order: its models newest first, then the retired ones. */
const CATALOG_IDS = [...MODELS, ...RETIRED_MODELS].map((m) => m.id);

// Paged like every list. The catalog is short: the default page holds all of it.
const listQuery = z.strictObject({
  status: z.enum(["active", "legacy", "deprecated", "retired"]).optional(),
  limit: intParam(1, 100).default(100),
  cursor: z
    .string()
    .refine((id) => CATALOG_IDS.includes(id), "not a model id of the catalog")
    .optional(),
});

modelRoutes.get(
  "/",
  doc({
    summary: "The model catalog: every model a conversation may name, and the retired ones with their replacements",
    responses: {
      200: {
        description: "A page of the catalog, newest first (at the default limit, all of it)",
        schema: modelListSchema,
      },
    },
  }),
  query(listQuery),
  async (c) => {
    const { status, limit, cursor } = c.req.valid("query");
    const day = utcDay();
    const defaultModel = (await defaultModelEntry(c.env)).id;
    const all = [...MODELS.map((m) => modelView(m, day, defaultModel)), ...RETIRED_MODELS.map(retiredView)];
    // The cursor is the previous page's last id, found in the whole catalog rather than among the
    // models of one status: a deprecated model that retires between two pages moves to the other
    // status, and the next page still starts after it.
    const rest = cursor === undefined ? all : all.slice(CATALOG_IDS.indexOf(cursor) + 1);
    const rows = status ? rest.filter((m) => m.status === status) : rest;
    return c.json({ ...listBody(pageOf(rows, limit, (m) => m.id)), defaultModel });
  },
);

modelRoutes.get(
  "/:id",
  doc({
    summary: "One model, by id or alias; a model the catalog does not list is asked of Anthropic's Models API",
    responses: { 200: { description: "The model", schema: modelSchema } },
  }),
  async (c) => {
    const id = c.req.param("id");
    if (!modelIdSchema.safeParse(id).success) throw notFound("model");
    const day = utcDay();
    const defaultModel = (await defaultModelEntry(c.env)).id;
    const entry = MODELS.find((m) => m.id === id || m.aliases.includes(id));
    if (entry) return c.json(modelView(entry, day, defaultModel));
    const gone = RETIRED_MODELS.find((m) => m.id === id || m.aliases.includes(id));
    if (gone) return c.json(retiredView(gone));
    const known = await resolveSettingsModel(c.env, { id, field: "model" });
    if (!known.ok) throw notFound(`model ${id}`);
    return c.json({ ...modelView(known.entry, day, defaultModel), catalog: false });
  },
);
