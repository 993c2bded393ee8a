// Which model entry a conversation runs on. The catalog answers for every model it lists; a model
// it does not list is asked of Anthropic's Models API (through the SDK, cached per isolate), so a
// model released after this build works at once, with conservative limits until the catalog has it.
import type Anthropic from "@anthropic-ai/sdk";
import { envConfig } from "../../core/env-config";
import { DEFAULT_MODEL, type ModelEntry } from "../../core/models/catalog";
import { catalogEntry, entryFromModelInfo, findModel, utcDay, type ModelInfoLike } from "../../core/models/lookup";
import { createModelClient } from "../../core/model-client";
import type { ModelEnv } from "../../core/model-provider";
import { crossCheckSettings, type Settings, type SettingsPatch } from "../../core/settings";

export type SettingsModel = { ok: true; entry: ModelEntry } | { ok: false; message: string };

/**
 * A model a turn runs on: `movedFrom` when the conversation's model retired and its replacement
 * answers instead; `transient` when the Models API could not be asked (worth a retry).
 */
export type TurnModel =
  | { ok: true; entry: ModelEntry; movedFrom?: { id: string; retiredOn: string } }
  | { ok: false; message: string; transient?: boolean };

const HIT_TTL_MS = 60 * 60 * 1000;
const MISS_TTL_MS = 5 * 60 * 1000;
/**
 * Each map holds this many answers, the least recently used going first: any key can ask about
 * any model-shaped id, so both are bounded, and they are held apart so that a client cycling
 * through made-up ids never pushes out the answers conversations run on (it would make every turn
 * on such a model ask upstream again, on the platform's one key).
 */
const LOOKUPS_KEPT = 256;
/** Only ids shaped like a model's are asked about (a Claude model, or the offline model's test models). */
const ASKABLE = /^(claude|offline)-[a-z0-9][a-z0-9.-]{0,78}$/;
type Lookup = { info: ModelInfoLike | null; until: number };
const knownLookups = new Map<string, Lookup>();
const unknownLookups = new Map<string, Lookup>();

function remember(id: string, info: ModelInfoLike | null, ttl: number): void {
  knownLookups.delete(id);
  unknownLookups.delete(id);
  const map = info ? knownLookups : unknownLookups;
  map.set(id, { info, until: Date.now() + ttl });
  while (map.size > LOOKUPS_KEPT) map.delete(map.keys().next().value!);
}

/** The answer this isolate holds for `id` while it is fresh, moved to the back as the most recently used. */
function recall(id: string): Lookup | undefined {
  for (const map of [knownLookups, unknownLookups]) {
    const hit = map.get(id);
    if (!hit) continue;
    map.delete(id);
    if (hit.until <= Date.now()) return undefined;
    map.set(id, hit);
    return hit;
  }
  return undefined;
}

/** Forgets the Models API answers this isolate cached (tests). */
export function forgetModelLookups(): void {
  knownLookups.clear();
  unknownLookups.clear();
}

/**
 * What the Models API says of `id`: its info, null when it does not know the model, or an error
 * message when it could not be asked (no model configured, the API unreachable).
 */
type ModelsApiAnswer =
  | { kind: "known"; info: ModelInfoLike }
  | { kind: "unknown" }
  | { kind: "unreachable"; error: string };

const known = (info: ModelInfoLike | null): ModelsApiAnswer => (info ? { kind: "known", info } : { kind: "unknown" });

async function askModelsApi(env: ModelEnv, id: string, client?: Anthropic): Promise<ModelsApiAnswer> {
  if (!ASKABLE.test(id)) return { kind: "unknown" };
  const cached = recall(id);
  if (cached) return known(cached.info);
  let api: Anthropic;
  try {
    api = client ?? createModelClient(env, { maxRetries: 1 });
  } catch (err) {
    return { kind: "unreachable", error: err instanceof Error ? err.message : String(err) };
  }
  try {
    const info = (await api.models.retrieve(id)) as unknown as ModelInfoLike;
    remember(id, info, HIT_TTL_MS);
    return known(info);
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 404) {
      remember(id, null, MISS_TTL_MS);
      return { kind: "unknown" };
    }
    return {
      kind: "unreachable",
      error: `Anthropic's Models API could not be asked (${err instanceof Error ? err.message : String(err)})`,
    };
  }
}

/**
 * The entry for a model a user names in settings (`field` names it in messages): a current catalog
 * model; a retired one is refused naming its replacement; an unknown one is accepted when the
 * Models API knows it and it has not retired.
 */
export async function resolveSettingsModel(
  env: ModelEnv,
  { id, field = "settings.model", client }: { id: string; field?: string; client?: Anthropic },
): Promise<SettingsModel> {
  const found = findModel(id);
  if (found.kind === "current") return { ok: true, entry: found.entry };
  if (found.kind === "retired")
    return {
      ok: false,
      message: `${field}: ${id} retired on ${found.retiredOn}; use ${found.replacement.id} (${found.replacement.name}), its replacement`,
    };
  const asked = await askModelsApi(env, id, client);
  if (asked.kind === "unreachable")
    return {
      ok: false,
      message: `${field}: ${id} is not in the model catalog (GET /v1/models) and could not be checked: ${asked.error}`,
    };
  if (asked.kind === "unknown")
    return {
      ok: false,
      message: `${field}: unknown model ${id}: not in the model catalog (GET /v1/models), and Anthropic's Models API does not know it`,
    };
  const { info } = asked;
  if (info.lifecycle === "retired")
    return {
      ok: false,
      message: `${field}: ${id} has retired (Anthropic's Models API says so); pick a current model from GET /v1/models`,
    };
  return { ok: true, entry: entryFromModelInfo(info, utcDay()) };
}

/**
 * The entry a turn or a fold runs on. A retired model never fails a turn: its replacement answers
 * (and the caller records the move). A model the catalog no longer knows and the API cannot
 * confirm is an error the caller reports.
 */
export async function resolveTurnModel(env: ModelEnv, id: string, client?: Anthropic): Promise<TurnModel> {
  const found = findModel(id);
  if (found.kind === "current") return { ok: true, entry: found.entry };
  if (found.kind === "retired")
    return { ok: true, entry: found.replacement, movedFrom: { id, retiredOn: found.retiredOn } };
  const asked = await askModelsApi(env, id, client);
  if (asked.kind === "unreachable")
    return {
      ok: false,
      message: `the model ${id} is not in the catalog and could not be checked: ${asked.error}`,
      transient: true,
    };
  if (asked.kind === "unknown")
    return {
      ok: false,
      message: `the model ${id} is unknown to the catalog and to Anthropic's Models API; choose one from GET /v1/models`,
    };
  const { info } = asked;
  if (info.lifecycle === "retired")
    return {
      ok: true,
      entry: catalogEntry(DEFAULT_MODEL)!,
      movedFrom: { id, retiredOn: (info.retires_at ?? utcDay()).slice(0, 10) },
    };
  return { ok: true, entry: entryFromModelInfo(info, utcDay()) };
}

/** The model new conversations get: DEFAULT_MODEL (the variable) when it resolves, its replacement when it retired, else the catalog's default. */
export async function defaultModelEntry(
  env: ModelEnv & { DEFAULT_MODEL?: string },
  client?: Anthropic,
): Promise<ModelEntry> {
  const configured = envConfig(env).DEFAULT_MODEL;
  const resolved = await resolveTurnModel(env, configured, client);
  if (resolved.ok) return resolved.entry;
  console.error(`DEFAULT_MODEL ${configured}: ${resolved.message}; new conversations use ${DEFAULT_MODEL}`);
  return catalogEntry(DEFAULT_MODEL)!;
}

/**
 * Settings as a whole against their models: the model and the refusal fallback resolve (see
 * resolveSettingsModel) and every rule of the model's entry holds. The entry, or the message of
 * the first problem, naming its field.
 */
export async function checkSettings(env: ModelEnv, settings: Settings, client?: Anthropic): Promise<SettingsModel> {
  const model = await resolveSettingsModel(env, { id: settings.model, field: "settings.model", client });
  if (!model.ok) return model;
  if (settings.refusalFallbackModel !== null) {
    const fallback = await resolveSettingsModel(env, {
      id: settings.refusalFallbackModel,
      field: "settings.refusalFallbackModel",
      client,
    });
    if (!fallback.ok) return fallback;
  }
  const problem = crossCheckSettings(settings, model.entry);
  return problem ? { ok: false, message: problem } : model;
}

export type PlannedPatch =
  | { ok: true; patch: SettingsPatch; from: ModelEntry | null; to: ModelEntry }
  | { ok: false; message: string };

/**
 * A settings patch with the models it involves resolved: the conversation's current model (`from`;
 * null when it retired or is unknown), the model the patch leaves it on (`to`). A conversation whose
 * model retired moves to the replacement with any patch that does not name a model itself.
 */
export async function planSettingsPatch(
  env: ModelEnv,
  { current, patch, client }: { current: Settings; patch: SettingsPatch; client?: Anthropic },
): Promise<PlannedPatch> {
  const now = await resolveTurnModel(env, current.model, client);
  const from = now.ok && !now.movedFrom ? now.entry : null;
  const wanted = { ...patch };
  if (wanted.model === undefined && now.ok && now.movedFrom) wanted.model = now.entry.id;
  let to: ModelEntry;
  if (wanted.model !== undefined && wanted.model !== from?.id) {
    const named = await resolveSettingsModel(env, { id: wanted.model, field: "settings.model", client });
    if (!named.ok) return named;
    to = named.entry;
  } else if (from) to = from;
  else
    return {
      ok: false,
      message: now.ok ? `settings.model: ${current.model} cannot be used` : `settings.model: ${now.message}`,
    };
  if (wanted.refusalFallbackModel) {
    const fallback = await resolveSettingsModel(env, {
      id: wanted.refusalFallbackModel,
      field: "settings.refusalFallbackModel",
      client,
    });
    if (!fallback.ok) return fallback;
  }
  return { ok: true, patch: wanted, from, to };
}
