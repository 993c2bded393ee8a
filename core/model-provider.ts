// Which model answers, decided in one place for both workers. The embedded offline model is a
// stand-in for local dev and tests: a deployed worker that lost its key must say so, never answer
// with made-up replies or commit made-up summaries.
import { envConfig } from "./env-config";

export type ModelProvider = "anthropic" | "offline";

/** The variables the choice reads (a worker's Env satisfies this). */
export interface ModelEnv {
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  /** "anthropic" (a key is required) or "offline"; unset picks Anthropic, or offline under local dev. */
  MODEL_PROVIDER?: string;
  /** "true" only under `npm start`, the tests and the benchmarks. */
  DEV_BOOTSTRAP?: string;
}

export type ModelChoice =
  | { ok: true; provider: "anthropic"; apiKey: string; baseURL?: string }
  | { ok: true; provider: "offline" }
  | { ok: false; message: string };

export const MODEL_NOT_CONFIGURED = "model_not_configured";

/** False in a production build (OFFLINE_MODEL_BUNDLED=false at bundle time): the offline model is not shipped. */
declare const OFFLINE_MODEL_BUNDLED: boolean | undefined;
export const OFFLINE_MODEL_IN_BUILD = typeof OFFLINE_MODEL_BUNDLED === "undefined" || OFFLINE_MODEL_BUNDLED;

const NOT_IN_BUILD =
  "the model is not configured: the offline model was asked for (MODEL_PROVIDER=offline or local dev) but this deployment was built without it (OFFLINE_MODEL_BUNDLED=false); set the ANTHROPIC_API_KEY secret, or deploy without that define";

/**
 * A MODEL_PROVIDER other than "anthropic" or "offline", or an ANTHROPIC_BASE_URL that is not an
 * http(s) URL (which would send the key somewhere unintended), is refused by name by envConfig.
 */
export function chooseModel(env: ModelEnv, offlineInBuild = OFFLINE_MODEL_IN_BUILD): ModelChoice {
  const config = envConfig(env);
  const provider = config.MODEL_PROVIDER;
  const apiKey = config.ANTHROPIC_API_KEY;
  if (provider === "offline")
    return offlineInBuild ? { ok: true, provider: "offline" } : { ok: false, message: NOT_IN_BUILD };
  if (apiKey) return { ok: true, provider: "anthropic", apiKey, baseURL: config.ANTHROPIC_BASE_URL };
  if (provider === undefined && config.DEV_BOOTSTRAP)
    return offlineInBuild ? { ok: true, provider: "offline" } : { ok: false, message: NOT_IN_BUILD };
  return {
    ok: false,
    message:
      provider === "anthropic"
        ? "the model is not configured: MODEL_PROVIDER is anthropic but the ANTHROPIC_API_KEY secret is not set"
        : "the model is not configured: set the ANTHROPIC_API_KEY secret (or MODEL_PROVIDER=offline for the embedded offline model)",
  };
}

/** Thrown where a model call would need a model that is not configured. */
export class ModelNotConfiguredError extends Error {
  readonly type = MODEL_NOT_CONFIGURED;
  readonly status = 503;
}

/** The problem with the model configuration, or null when a model can answer. */
export function modelProblem(env: ModelEnv): string | null {
  const choice = chooseModel(env);
  return choice.ok ? null : choice.message;
}
