/**
 * The embedded deterministic offline model: a fetch implementation that
 * speaks Anthropic's Messages API wire format, so the real SDK client runs
 * unchanged against it (no network, no key, same request → same bytes given
 * the same prompt-cache state).
 *
 *   const client = new Anthropic({ apiKey: "offline", baseURL: "https://offline-model.invalid",
 *                                  fetch: createOfflineModelFetch(), maxRetries: 0 });
 *
 * Serves POST …/v1/messages (JSON or SSE) and POST …/v1/messages/count_tokens;
 * anything else is a 404 JSON error. Pure TypeScript: runs in workerd and Node.
 */
import { countRequestTokens } from "../tokens";
import { accountPromptCache, CacheControlError } from "./cache";
import type { ModelErrorStatus } from "./directives";
import { recordFault } from "./fault-log";
import { generate } from "./generate";
import { hashSeed, idFrom } from "./hash";
import { messageEvents, sseStream, type MessageJson } from "./sse";
import type { WireRequest } from "./wire";

export { resetOfflineCache, minimumCacheableTokens } from "./cache";
export { servedFaults, type ServedFault } from "./fault-log";
export { parseDirectives, type Directives } from "./directives";

export interface OfflineModelOptions {
  /** Clock for prompt-cache lifetimes (ms since epoch); defaults to Date.now. */
  now?: () => number;
  /** Context window per exact model name, overriding the built-in rule. */
  windows?: Record<string, number>;
}

export const DEFAULT_CONTEXT_WINDOW = 200_000;

/** `offline-<N>k` models get N×1000 tokens (small windows make overflow testable); all else 200,000. */
export function contextWindowFor(model: string, windows?: Record<string, number>): number {
  const override = windows?.[model];
  if (override !== undefined) return override;
  const match = model.match(/offline-(\d+)k/);
  return match ? Number(match[1]) * 1000 : DEFAULT_CONTEXT_WINDOW;
}

export function createOfflineModelFetch(options: OfflineModelOptions = {}): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) =>
    handleMessagesRequest(new Request(input, init), options)) as typeof fetch;
}

type ErrorType = "invalid_request_error" | "not_found_error" | "rate_limit_error" | "api_error" | "overloaded_error";

const DIRECTIVE_ERRORS: Record<Exclude<ModelErrorStatus, "overflow">, { type: ErrorType; message: string }> = {
  400: { type: "invalid_request_error", message: "Invalid request (offline model: @model-error 400)." },
  429: { type: "rate_limit_error", message: "Rate limit exceeded (offline model: @model-error 429)." },
  500: { type: "api_error", message: "Internal server error (offline model: @model-error 500)." },
  529: { type: "overloaded_error", message: "Overloaded (offline model: @model-error 529)." },
};

function errorResponse(status: number, type: ErrorType, message: string, seed: string, extra: Record<string, string> = {}): Response {
  const requestId = `req_${idFrom(`${status}:${seed}`)}`;
  return new Response(JSON.stringify({ type: "error", error: { type, message }, request_id: requestId }), {
    status,
    headers: { "content-type": "application/json", "request-id": requestId, ...extra },
  });
}

function invalid(message: string, seed: string): Response {
  return errorResponse(400, "invalid_request_error", message, seed);
}

/** Minimal validation: the message names the offending field, like the real API's errors. */
function validate(body: unknown, forCounting: boolean): string | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "request body must be a JSON object";
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model === "") return "model: Field required (a non-empty string)";
  if (!forCounting && (typeof b.max_tokens !== "number" || !Number.isInteger(b.max_tokens) || b.max_tokens < 1)) {
    return "max_tokens: Field required (an integer >= 1)";
  }
  if (!Array.isArray(b.messages) || b.messages.length === 0) return "messages: Field required (at least one message)";
  for (const [i, m] of (b.messages as unknown[]).entries()) {
    const message = m as Record<string, unknown> | null;
    if (message?.role !== "user" && message?.role !== "assistant") return `messages.${i}.role: must be "user" or "assistant"`;
    if (typeof message.content !== "string" && !Array.isArray(message.content)) return `messages.${i}.content: must be a string or an array of blocks`;
  }
  if (b.system !== undefined && typeof b.system !== "string" && !Array.isArray(b.system)) return "system: must be a string or an array of text blocks";
  if (b.tools !== undefined && !Array.isArray(b.tools)) return "tools: must be an array";
  return null;
}

export async function handleMessagesRequest(request: Request, options: OfflineModelOptions = {}): Promise<Response> {
  const { pathname } = new URL(request.url);
  const counting = pathname.endsWith("/v1/messages/count_tokens");
  if (request.method !== "POST" || !(counting || pathname.endsWith("/v1/messages"))) {
    return errorResponse(404, "not_found_error", `Not found: ${request.method} ${pathname}`, pathname);
  }
  const raw = await request.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return invalid("request body is not valid JSON", raw);
  }
  const problem = validate(body, counting);
  if (problem) return invalid(problem, raw);
  const req = body as WireRequest;

  const total = countRequestTokens(req);
  if (counting) return Response.json({ input_tokens: total });
  const window = contextWindowFor(req.model, options.windows);
  if (total > window) return invalid(`prompt is too long: ${total} tokens > ${window} maximum`, raw);

  const messageId = `msg_${idFrom(raw)}`;
  // The SDK numbers its attempts at one call: `@model-error … attempts=K` fails only the first K.
  const retryCount = Number(request.headers.get("x-stainless-retry-count") ?? 0) || 0;
  const generation = generate(req, messageId, retryCount);
  if (generation.kind === "error") {
    recordFault(generation.status, retryCount, req.messages);
    if (generation.status === "overflow") return invalid(`prompt is too long: ${total} tokens > ${Math.max(1, total - 1)} maximum`, raw);
    const { type, message } = DIRECTIVE_ERRORS[generation.status];
    // Real 429s tell the client when to come back; the SDK honours retry-after.
    return errorResponse(generation.status, type, message, raw, generation.status === 429 ? { "retry-after": "1" } : {});
  }

  let accounting: ReturnType<typeof accountPromptCache>;
  try {
    accounting = accountPromptCache(req, (options.now ?? Date.now)());
  } catch (error) {
    if (error instanceof CacheControlError) return invalid(error.message, raw);
    throw error;
  }

  const message: MessageJson = {
    id: messageId,
    type: "message",
    role: "assistant",
    model: req.model,
    content: generation.content,
    stop_reason: generation.stopReason,
    stop_sequence: null,
    usage: { ...accounting.usage, output_tokens: generation.outputTokens },
  };
  const headers = { "request-id": `req_${idFrom(`ok:${raw}`)}` };
  if (req.stream === true) {
    return new Response(sseStream(messageEvents(message, hashSeed(messageId))), {
      headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  }
  return new Response(JSON.stringify(message), { headers: { ...headers, "content-type": "application/json" } });
}
