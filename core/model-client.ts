// One way to reach the model: the Anthropic SDK. With an API key it talks to Anthropic; without
// one the SDK's fetch is pointed at the embedded offline model, which speaks the same wire
// format. The SDK is never bypassed, so the same turn code runs against both.
import Anthropic from "@anthropic-ai/sdk";

export interface ModelConfig {
  apiKey?: string;
  baseURL?: string;
  /** SDK retries for 429/5xx with its own exponential backoff. */
  maxRetries?: number;
}

export const OFFLINE_BASE_URL = "https://offline-model.invalid";

// The offline model carries the ~1 MB tokenizer rank table: it is imported on the first offline
// call only, so a worker talking to Anthropic never loads it.
let offlineFetch: Promise<typeof fetch> | undefined;
const lazyOfflineFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  offlineFetch ??= import("./offline-model").then((m) => m.createOfflineModelFetch());
  return (await offlineFetch)(input, init);
}) as typeof fetch;

export function createModelClient(config: ModelConfig): Anthropic {
  const maxRetries = config.maxRetries ?? 2;
  if (config.apiKey) return new Anthropic({ apiKey: config.apiKey, baseURL: config.baseURL || undefined, maxRetries });
  return new Anthropic({ apiKey: "offline", baseURL: OFFLINE_BASE_URL, fetch: lazyOfflineFetch, maxRetries });
}
