// The one error shape of the API: {"error":{"type","message"}} with a 4xx/5xx status.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { HTTPException } from "hono/http-exception";
import { ENV_CONFIG_INVALID } from "../../core/env-config";
import { MODEL_NOT_CONFIGURED } from "../../core/model-provider";

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
export const unauthorized = (message = "missing or invalid API key") =>
  new ApiError(401, "authentication_error", message);

/**
 * The one table of error types and their HTTP statuses. `default`: the type an error of that status
 * gets when it names none (one per status). `turn`: a turn that ended in this error is answered
 * with this status; any other turn error (the model's, storage's, an interrupted turn's) is a 502.
 */
export const ERROR_TYPES = {
  invalid_request: { status: 400, default: true, turn: true },
  authentication_error: { status: 401, default: true },
  permission_error: { status: 403, default: true },
  not_found: { status: 404, default: true, turn: true },
  method_not_allowed: { status: 405, default: true },
  conflict: { status: 409, default: true },
  /** A new turn while an earlier one waits on client tools. */
  turn_paused: { status: 409, turn: true },
  /** Regenerate refusals (durable-objects/conversation/regenerate.ts): the conversation's state, not the request. */
  turn_in_progress: { status: 409, turn: true },
  nothing_to_regenerate: { status: 409, turn: true },
  regenerate_folded: { status: 409, turn: true },
  /** Results for calls already answered or closed; as a turn's error, a continuation whose turn ended first. */
  tool_results_conflict: { status: 409, turn: true },
  /** The request holding this Idempotency-Key has not finished (with Retry-After: 1). */
  idempotency_in_progress: { status: 409 },
  payload_too_large: { status: 413, default: true },
  unsupported_media_type: { status: 415, default: true },
  /** An Idempotency-Key sent again with another request. */
  idempotency_key_reused: { status: 422 },
  upgrade_required: { status: 426, default: true },
  rate_limited: { status: 429, default: true },
  request_header_fields_too_large: { status: 431, default: true },
  /** The model named in the settings cannot be used: a 400, or a 503 when the error says the cause is passing. */
  model_unavailable: { status: 400, turn: true },
  [MODEL_NOT_CONFIGURED]: { status: 503, turn: true },
  /** Any other server error; also the type of a 5xx that names none. */
  api_error: { status: 500, default: true },
  /** A variable of the worker's configuration does not parse (core/env-config.ts): every request. */
  [ENV_CONFIG_INVALID]: { status: 500 },
  /** A turn's model call failed (agent/model-errors.ts), its context over the model's window included. */
  model_error: { status: 502 },
  context_overflow: { status: 502 },
  /** D1 or R2 failed past the retries. */
  storage_error: { status: 502 },
  /** A turn stopped before it finished (its object restarted or cut the stream). */
  turn_interrupted: { status: 502 },
} as const satisfies Record<string, { status: ContentfulStatusCode; default?: true; turn?: true }>;

type ErrorRow = { status: ContentfulStatusCode; default?: true; turn?: true };
const ROWS: [string, ErrorRow][] = Object.entries(ERROR_TYPES);

/** The type an error of `status` gets when it names none. */
export function typeForStatus(status: number): string {
  return (
    ROWS.find(([, row]) => row.status === status && row.default)?.[0] ??
    (status >= 500 ? "api_error" : "invalid_request")
  );
}

/** The status a turn that ended in `error` is answered with: the table's for the caller's errors, else 502. */
export function turnErrorStatus(error: { type: string; status?: number }): ContentfulStatusCode {
  const row = ROWS.find(([type, r]) => type === error.type && r.turn)?.[1];
  if (!row) return 502;
  return error.type === "model_unavailable" && error.status === 503 ? 503 : row.status;
}

export function errorBody(status: number, message: string, type?: string) {
  return { error: { type: type ?? typeForStatus(status), message } };
}
