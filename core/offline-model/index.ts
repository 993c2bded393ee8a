/**
 * The embedded deterministic offline model: a fetch implementation that speaks Anthropic's
 * Messages API wire format, so the real SDK client runs unchanged against it (no network, no key,
 * same request → same bytes given the same prompt-cache state).
 *
 *   const client = new Anthropic({ apiKey: "offline", baseURL: "https://offline-model.invalid",
 *                                  fetch: createOfflineModelFetch(), maxRetries: 0 });
 *
 * Serves POST …/v1/messages (JSON or SSE), POST …/v1/messages/count_tokens, GET …/v1/models and
 * GET …/v1/models/{id}; anything else is a 404. It is as strict as the real API (rules/: every
 * documented refusal, with its status, type and wording) and behaves like the model it is asked
 * for (model.ts: the catalog entry, or a test model `offline-<N>k`): thinking, signatures bound to
 * the conversation, stop reasons, server tools. Pure TypeScript: runs in workerd and Node.
 */
import { utcDay } from "../models/lookup";
import { blockPrefixTokens, accountPromptCache, resetOfflineCache as resetPromptCache } from "./cache";
import { walkPrefix } from "./binding";
import type { Counter } from "./counting";
import type { ModelErrorStatus } from "./directives";
import { ApiError, errorResponse, type ErrorType, invalid } from "./errors";
import { recordFault } from "./fault-log";
import { generate } from "./generate";
import { hashSeed, idFrom } from "./hash";
import { type ModelProfile, resolveModel } from "./model";
import { listModels, retrieveModel } from "./models-api";
import { checkShape, validateRequest, type Endpoint } from "./rules";
import { messageEvents, sseStream, type MessageJson } from "./sse";
import { resetStreamFaults, takeStreamFailure } from "./stream-faults";
import { betweenToolsEffort, checkThinking } from "./thinking-check";
import { latestRealUserIndex, promptText } from "./turn";
import type { WireRequest } from "./wire";

export { minimumCacheableTokens } from "./cache";
export { servedFaults, type ServedFault } from "./fault-log";
export { parseDirectives, type Directives } from "./directives";

export interface OfflineModelOptions {
  /** Clock for prompt-cache lifetimes and model lifecycles (ms since epoch); defaults to Date.now. */
  now?: () => number;
  /** Context window per exact model name, overriding the model's. */
  windows?: Record<string, number>;
}

/**
 * Requests above this many bytes get Cloudflare's 413 (https://platform.claude.com/docs/en/api/errors#request-size-limits).
 * The page says 32 MB: the stricter reading (10^6 bytes a MB) is taken, so nothing the platform
 * sends passes here and is refused by the API.
 */
export const MAX_REQUEST_BYTES = 32_000_000;

/** Forget every cached prefix and stream-fault count (tests; a new isolate starts empty too). */
export function resetOfflineCache(): void {
  resetPromptCache();
  resetStreamFaults();
}

export function createOfflineModelFetch(options: OfflineModelOptions = {}): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) =>
    abortable(await handleMessagesRequest(new Request(input, init), options), init?.signal)) as typeof fetch;
}

/**
 * The body as a real fetch gives it: aborting the request's signal (the SDK's cancel, a stopped
 * turn) errors the body with an AbortError and cancels what produces it.
 */
function abortable(res: Response, signal: AbortSignal | null | undefined): Response {
  if (!signal || !res.body) return res;
  const reader = res.body.getReader();
  let aborted = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const abort = () => {
        aborted = true;
        controller.error(new DOMException("The operation was aborted.", "AbortError"));
        reader.cancel().catch(() => {});
      };
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (aborted) return;
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const DIRECTIVE_ERRORS: Record<Exclude<ModelErrorStatus, "overflow">, { type: ErrorType; message: string }> = {
  400: { type: "invalid_request_error", message: "Invalid request (offline model: @model-error 400)." },
  429: { type: "rate_limit_error", message: "Rate limit exceeded (offline model: @model-error 429)." },
  500: { type: "api_error", message: "Internal server error (offline model: @model-error 500)." },
  529: { type: "overloaded_error", message: "Overloaded (offline model: @model-error 529)." },
};
const STREAM_ERRORS = {
  overloaded_error: { status: 529, message: "Overloaded" },
  api_error: { status: 500, message: "Internal server error" },
} as const;

function json(value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), { headers: { "content-type": "application/json", ...headers } });
}

function byteLength(text: string): number {
  return text.length * 3 < MAX_REQUEST_BYTES ? text.length : new TextEncoder().encode(text).length;
}

/** The request without the blocks dropped silently (thinking another model cannot read). */
function withoutDropped(request: WireRequest, dropped: Set<string>): WireRequest {
  if (dropped.size === 0) return request;
  const messages = request.messages.map((message, i) =>
    Array.isArray(message.content)
      ? { ...message, content: message.content.filter((_, j) => !dropped.has(`${i}.${j}`)) }
      : message,
  );
  return { ...request, messages };
}

export async function handleMessagesRequest(request: Request, options: OfflineModelOptions = {}): Promise<Response> {
  const url = new URL(request.url);
  const { pathname } = url;
  const now = (options.now ?? Date.now)();
  const day = utcDay(now);
  try {
    const modelPath = /\/v1\/models(?:\/([^/]+))?\/?$/.exec(pathname);
    if (request.method === "GET" && modelPath) {
      const requestId = { "request-id": `req_${idFrom(`models:${pathname}${url.search}`)}` };
      return json(
        modelPath[1] ? retrieveModel(decodeURIComponent(modelPath[1]), day) : listModels(url.searchParams, day),
        requestId,
      );
    }
    const endpoint: Endpoint | null = pathname.endsWith("/v1/messages/count_tokens")
      ? "count_tokens"
      : pathname.endsWith("/v1/messages")
        ? "messages"
        : null;
    if (request.method !== "POST" || endpoint === null)
      throw new ApiError(404, "not_found_error", `Not found: ${request.method} ${pathname}`);
    const raw = await request.text();
    try {
      return await answer(raw, { endpoint, http: request, options, now, day });
    } catch (error) {
      if (error instanceof ApiError) return errorResponse(error, raw);
      throw error;
    }
  } catch (error) {
    if (error instanceof ApiError) return errorResponse(error, pathname);
    // A body nested deeper than a rule's walk can follow: an answer, never a throw (the SDK would
    // retry it as a connection error). The API's own depth limit is not documented.
    if (error instanceof RangeError && /call stack/i.test(error.message))
      return errorResponse(invalid("The request body is nested too deeply to be read"), pathname);
    throw error;
  }
}

async function answer(
  raw: string,
  {
    endpoint,
    http,
    options,
    now,
    day,
  }: { endpoint: Endpoint; http: Request; options: OfflineModelOptions; now: number; day: string },
): Promise<Response> {
  if (byteLength(raw) > MAX_REQUEST_BYTES)
    throw new ApiError(413, "request_too_large", "Request exceeds the maximum size");
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw invalid("There was an error parsing the body of your request: it is not valid JSON");
  }
  // JSON.parse takes "\ud83d" alone; the API's parser does not (a lone surrogate is no character).
  if (holdsLoneSurrogate(body)) throw invalid("The request body is not valid JSON: no low surrogate in string");
  checkShape(body, endpoint);
  const model = resolveModel(String(body.model), day, options.windows);
  if (!model) throw new ApiError(404, "not_found_error", `model: ${String(body.model)}`);
  const sent = body as unknown as WireRequest;
  const betas = (http.headers.get("anthropic-beta") ?? "").split(",").map((b) => b.trim());
  validateRequest({ body, request: sent, model, endpoint, betas, day });
  const thinking = checkThinking(sent, model, betas);
  const req = withoutDropped(sent, thinking.dropped);
  const counter: Counter = { ratio: model.tokenizerRatio, thinking: (block) => thinking.tokens.get(block) };
  const total = blockPrefixTokens(req, counter).at(-1) ?? 0;
  // Every answer names its request, a count's too (the SDK reads it into `_request_id`).
  if (endpoint === "count_tokens")
    return json({ input_tokens: total }, { "request-id": `req_${idFrom(`count:${raw}`)}` });
  if (total > model.contextWindow)
    throw invalid(`prompt is too long: ${total} tokens > ${model.contextWindow} maximum`);

  const messageId = `msg_${idFrom(raw)}`;
  // The SDK numbers its attempts at one call: `@model-error … attempts=K` fails only the first K.
  const retryCount = Number(http.headers.get("x-stainless-retry-count") ?? 0) || 0;
  const chain = {
    prefix: walkPrefix(req).end,
    previous: thinking.previous,
    root: thinking.root,
    betweenToolsEffort: betweenToolsEffort(req, model),
  };
  const generation = generate({ request: req, body, model, messageId, retryCount, inputTokens: total, chain });
  if (generation.kind === "error") {
    recordFault(generation.status, retryCount, req.messages);
    if (generation.status === "overflow")
      throw invalid(`prompt is too long: ${total} tokens > ${Math.max(1, total - 1)} maximum`);
    const { type, message } = DIRECTIVE_ERRORS[generation.status];
    // Real 429s tell the client when to come back; the SDK honours retry-after.
    throw new ApiError(generation.status, type, message, generation.status === 429 ? { "retry-after": "1" } : {});
  }

  let failure = null;
  if (generation.streamError) {
    const prompt = latestRealUserIndex(req.messages);
    const key = `${model.id}\n${prompt >= 0 ? promptText(req.messages, prompt) : ""}\n${req.messages.length}`;
    if (takeStreamFailure(key, generation.streamError.attempts)) {
      const { status, message } = STREAM_ERRORS[generation.streamError.type];
      if (req.stream !== true) throw new ApiError(status, generation.streamError.type, message);
      failure = { type: generation.streamError.type, message, after: generation.streamError.after };
    }
  }

  const accounting = accountPromptCache(req, { now, counter, minimum: model.minCacheTokens, model });
  const message: MessageJson = {
    id: messageId,
    type: "message",
    role: "assistant",
    model: model.id,
    content: generation.content,
    stop_reason: generation.stopReason,
    stop_sequence: generation.stopSequence,
    stop_details: generation.stopDetails,
    container: null,
    diagnostics: null,
    usage: {
      ...accounting.usage,
      output_tokens: generation.outputTokens,
      output_tokens_details: { thinking_tokens: generation.thinkingTokens },
      // The SDK's Usage keys, all required (possibly null): server_tool_use null when no server
      // tool ran; the offline model serves no priority tier and no batches; fast mode is taken
      // whenever asked, the fastMode rule having refused the models without it.
      server_tool_use: generation.serverToolUse ?? null,
      service_tier: "standard",
      speed: body.speed === "fast" ? "fast" : "standard",
      inference_geo: inferenceGeoRan(body, model),
    },
  };
  const headers = { "request-id": `req_${idFrom(`ok:${raw}`)}` };
  if (req.stream === true) {
    return new Response(
      sseStream(messageEvents(message, { seed: hashSeed(messageId), failure, holdAfter: generation.holdAfter }), {
        paceMs: generation.paceMs ?? 0,
      }),
      {
        headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
      },
    );
  }
  return json(message, headers);
}

/**
 * Where inference ran, as the answer's usage says (https://platform.claude.com/docs/en/build-with-claude/data-residency:
 * "The response usage object includes an inference_geo field indicating where inference ran"): the
 * value asked for, else "global", the documented default. A model without the parameter says
 * "not_available", as real answers do (the docs do not say).
 */
function inferenceGeoRan(body: Record<string, unknown>, model: ModelProfile): string {
  if (model.inferenceGeo !== true) return "not_available";
  return typeof body.inference_geo === "string" ? body.inference_geo : "global";
}

/** Whether any string (or key) of a parsed JSON value holds a lone surrogate: a walk of any depth. */
function holdsLoneSurrogate(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (!value.isWellFormed()) return true;
    } else if (Array.isArray(value)) stack.push(...value);
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) {
        if (!k.isWellFormed()) return true;
        stack.push(v);
      }
  }
  return false;
}
