// One way to reach the model: the Anthropic SDK. For Anthropic it talks to the API; for the
// offline model (local dev, or MODEL_PROVIDER=offline) the SDK's fetch is pointed at the embedded
// model, which speaks the same wire format. The SDK is never bypassed, so the same turn code runs
// against both. Which one is core/model-provider.ts's decision, never a silent fallback.
import Anthropic from "@anthropic-ai/sdk";
import { chooseModel, ModelNotConfiguredError, type ModelEnv } from "./model-provider";

export interface ModelClientOptions {
  /** SDK retries for 429/5xx with its own exponential backoff. */
  maxRetries?: number;
}

export const OFFLINE_BASE_URL = "https://offline-model.invalid";

// The offline model carries the ~1 MB tokenizer rank table: it is imported on the first offline
// call only, so a worker talking to Anthropic never evaluates it. A production build defines
// OFFLINE_MODEL_BUNDLED=false (`npm run deploy:*`, `npm run check`): the bundler then drops the
// import and the model with its table is not even shipped.
// The test is written out here rather than imported (model-provider's OFFLINE_MODEL_IN_BUILD):
// the bundler folds a define only where it appears, so only this copy lets it drop the import
// (test/unit/lazy-offline-model.test.ts fails with the imported constant).
declare const OFFLINE_MODEL_BUNDLED: boolean | undefined;
const loadOfflineModel =
  typeof OFFLINE_MODEL_BUNDLED === "undefined" || OFFLINE_MODEL_BUNDLED ? () => import("./offline-model") : null;
let offlineFetch: Promise<typeof fetch> | undefined;
const lazyOfflineFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  offlineFetch ??= loadOfflineModel!().then((m) => m.createOfflineModelFetch());
  return (await offlineFetch)(input, init);
}) as typeof fetch;

/** The client the env's configuration selects; throws ModelNotConfiguredError when none is. */
export function createModelClient(env: ModelEnv, options: ModelClientOptions = {}): Anthropic {
  const maxRetries = options.maxRetries ?? 2;
  const choice = chooseModel(env);
  if (!choice.ok) throw new ModelNotConfiguredError(choice.message);
  if (choice.provider === "anthropic")
    return new Anthropic({ apiKey: choice.apiKey, baseURL: choice.baseURL, maxRetries });
  return new Anthropic({ apiKey: "offline", baseURL: OFFLINE_BASE_URL, fetch: lazyOfflineFetch, maxRetries });
}
