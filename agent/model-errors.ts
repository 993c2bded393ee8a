// Model failures as the turn reports them: a stable type, the provider's status, a message a person
// can read (never the raw JSON body) and the provider's request id, which support asks for.
import Anthropic from "@anthropic-ai/sdk";

export interface ModelFailure {
  type: "model_error" | "context_overflow";
  status?: number;
  message: string;
  /** The provider's error type (overloaded_error, rate_limit_error, ...), when it said. */
  providerType?: string;
  /** The provider's request id (the `request-id` header), when there was a response. */
  requestId?: string;
  /** On an overflow: what the provider counted and its real maximum ("N tokens > M maximum"), when it said. */
  overflow?: { promptTokens: number; maxTokens: number };
}

/** What each of the API's error types means to the person who reads it. */
const MEANING: Record<string, string> = {
  invalid_request_error: "the model API refused the request",
  authentication_error: "the model API did not accept the API key",
  billing_error: "the model API account has a billing problem",
  permission_error: "the API key may not use this model or feature",
  not_found_error: "the model API does not know what was asked for",
  request_too_large: "the request was larger than the model API accepts",
  rate_limit_error: "the model API's rate limit was reached; try again shortly",
  api_error: "the model API had an internal error; try again",
  timeout_error: "the model API timed out",
  overloaded_error: "the model API is overloaded; try again shortly",
};

/** The body's own message, never the SDK's "<status> <json>" rendering of the whole body. */
function apiMessage(err: InstanceType<typeof Anthropic.APIError>): string | null {
  if (err.apiMessage) return err.apiMessage;
  const body = err.error as { error?: { message?: unknown } } | undefined;
  return typeof body?.error?.message === "string" ? body.error.message : null;
}

export function describeModelError(err: unknown): ModelFailure {
  if (err instanceof Anthropic.APIError) {
    const detail = apiMessage(err);
    const providerType = err.type ?? undefined;
    const status = err.status ?? undefined;
    const overflow = status === 400 && /prompt is too long/i.test(detail ?? err.message);
    const figures = overflow ? /(\d+)\s*tokens\s*>\s*(\d+)\s*maximum/i.exec(detail ?? err.message) : null;
    const requestId = err.requestID ?? undefined;
    const meaning =
      (providerType && MEANING[providerType]) ??
      (status ? `the model API answered ${status}` : "the model call failed");
    const what = [status, providerType].filter(Boolean).join(" ");
    const message =
      err instanceof Anthropic.APIConnectionError
        ? `the model API could not be reached (${err.message})`
        : `${meaning}${what ? ` (${what})` : ""}${detail && detail !== meaning ? `: ${detail}` : ""}${requestId ? `; request id ${requestId}` : ""}`;
    return {
      type: overflow ? "context_overflow" : "model_error",
      status,
      message,
      ...(providerType ? { providerType } : {}),
      ...(requestId ? { requestId } : {}),
      ...(figures ? { overflow: { promptTokens: Number(figures[1]), maxTokens: Number(figures[2]) } } : {}),
    };
  }
  return { type: "model_error", message: err instanceof Error ? err.message : String(err) };
}

/**
 * An error event inside a streamed reply (HTTP 200 already sent): the SDK never retries those, as
 * its retries cover HTTP statuses only. Overloaded and internal errors are worth another try.
 */
export function isRetryableStreamError(err: unknown): boolean {
  return (
    err instanceof Anthropic.APIError &&
    !(err instanceof Anthropic.APIConnectionError) &&
    err.status === undefined &&
    (err.type === "overloaded_error" || err.type === "api_error")
  );
}
