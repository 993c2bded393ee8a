/**
 * Error answers in the real API's shape (https://platform.claude.com/docs/en/api/errors):
 * `{type:"error", error:{type, message}, request_id}` with the same id in a `request-id` header.
 * 4xx answers carry `x-should-retry: false` as the real ones do, so the SDK never retries a refusal
 * (429 is retried, as the SDK does for the real API). The 413 comes from Cloudflare in front of
 * the API and has neither a top-level `type` nor a `request_id`.
 */
import { idFrom } from "./hash";

export type ErrorType =
  | "invalid_request_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export class ApiError extends Error {
  /** The error's machine-readable details (`error.details`, e.g. `error_code`), which the SDK maps to its error classes. */
  details?: Record<string, unknown>;
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A 400 `invalid_request_error`. */
export const invalid = (message: string) => new ApiError(400, "invalid_request_error", message);

export function errorResponse(error: ApiError, seed: string): Response {
  const requestId = `req_${idFrom(`${error.status}:${seed}`)}`;
  const retry =
    error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 409 && error.status !== 429;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(retry ? { "x-should-retry": "false" } : {}),
    ...error.headers,
  };
  if (error.status === 413)
    return new Response(JSON.stringify({ error: { type: error.type, message: error.message } }), {
      status: 413,
      headers,
    });
  return new Response(
    JSON.stringify({
      type: "error",
      error: { type: error.type, message: error.message, ...(error.details ? { details: error.details } : {}) },
      request_id: requestId,
    }),
    {
      status: error.status,
      headers: { ...headers, "request-id": requestId },
    },
  );
}
