// The one error shape of the API: {"error":{"type","message"}} with a 4xx/5xx status.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { HTTPException } from "hono/http-exception";

export class ApiError extends HTTPException {
  constructor(
    status: ContentfulStatusCode,
    readonly type: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(status, { message });
  }
}

export const badRequest = (message: string) => new ApiError(400, "invalid_request", message);
export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found`);
export const unauthorized = (message = "missing or invalid API key") => new ApiError(401, "authentication_error", message);

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  426: "upgrade_required",
  429: "rate_limited",
  431: "request_header_fields_too_large",
};

export function errorBody(status: number, message: string, type?: string) {
  return { error: { type: type ?? TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request"), message } };
}
