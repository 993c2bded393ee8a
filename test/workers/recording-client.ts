// An SDK client on the offline model that records the requests it is sent (fold tests), and can
// hold them behind a gate or answer them with an error status.
import Anthropic from "@anthropic-ai/sdk";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createOfflineModelFetch } from "../../core/offline-model";

export function recordingClient(opts: { gate?: Promise<void>; failWith?: number } = {}) {
  const requests: { messages: unknown[]; [key: string]: unknown }[] = [];
  const inner = createOfflineModelFetch();
  const client = new Anthropic({
    apiKey: "offline",
    baseURL: OFFLINE_BASE_URL,
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      requests.push(JSON.parse(String(init?.body)));
      if (opts.gate) await opts.gate;
      if (opts.failWith)
        return new Response(
          JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
          { status: opts.failWith, headers: { "content-type": "application/json" } },
        );
      return inner(url, init);
    },
  });
  return { client, requests };
}
