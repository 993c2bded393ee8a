// What the OpenAPI document knows about a route, attached to the route's own middleware: the
// validators register the zod schemas they check with, and `doc()` adds what code cannot tell
// (summary, answers). The document is then read off app.routes, so it lists exactly what is
// registered and describes input with the very schemas that validate it.
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";

/**
 * A header the document names once (components.headers / components.parameters in document.ts):
 * the cortex bookmark, Retry-After, Idempotent-Replayed, a turn's x-conversation-id and Server-Timing.
 */
export type SharedHeader = "CortexBookmark" | "RetryAfter" | "IdempotentReplayed" | "ConversationId" | "ServerTiming";

/** A header an answer may carry: one of the shared ones, or described in place. */
export type HeaderDoc = { shared: SharedHeader } | { description: string };

export interface ResponseDoc {
  description: string;
  /** Headers this answer may carry (x-d1-bookmark is added to every /v1 answer by itself), by name. */
  headers?: Record<string, HeaderDoc>;
  /** The JSON body; absent: no body (204) or a body described in `content`. */
  schema?: z.ZodType;
  /** Other media types, e.g. text/event-stream or raw bytes, each with an OpenAPI schema object. */
  content?: Record<string, { schema: Record<string, unknown> }>;
}

export interface RouteDoc {
  summary: string;
  description?: string;
  responses: Record<number, ResponseDoc>;
  /** A query the handler checks itself with this schema (rather than through validate.ts). */
  query?: z.ZodType;
  /**
   * A body the route reads itself, not through a validator (uploads stream bytes into R2, an import
   * streams a transcript): the media types it takes, raw bytes (application/octet-stream) unless
   * `content` names them.
   */
  rawBody?: { description: string; content?: Record<string, { schema: Record<string, unknown> }> };
  /** Headers the route reads, e.g. Idempotency-Key; `shared`: a parameter the document names once. */
  headers?: ({ name: string; description: string } | { shared: "CortexBookmark" })[];
  /** OpenAPI extensions (x-…), e.g. the websocket frames of the socket route. */
  extensions?: Record<`x-${string}`, unknown>;
}

export type InputDoc = { json?: z.ZodType; query?: z.ZodType };

/** The x-cortex-bookmark an answer carries when the request read or wrote the tenant's cortex shard. */
export const cortexBookmarkAnswer: Record<string, HeaderDoc> = { "x-cortex-bookmark": { shared: "CortexBookmark" } };

const routeDocs = new WeakMap<object, RouteDoc>();
const inputDocs = new WeakMap<object, InputDoc>();

/** A middleware that does nothing but carry the route's description into the document. */
export function doc(d: RouteDoc): MiddlewareHandler {
  const carrier: MiddlewareHandler = async (_c, next) => next();
  routeDocs.set(carrier, d);
  return carrier;
}

/** Called by the validators: the schema a middleware checks `where` with. */
export function recordInput<T extends object>(middleware: T, input: InputDoc): T {
  inputDocs.set(middleware, input);
  return middleware;
}

// Hono wraps a sub-app's handler when the sub-app has its own error handler; the original is kept here.
const COMPOSED = "__COMPOSED_HANDLER";
const unwrap = (h: object): object => ((h as Record<string, unknown>)[COMPOSED] as object | undefined) ?? h;

export const routeDocOf = (handler: object) => routeDocs.get(unwrap(handler));
export const inputDocOf = (handler: object) => inputDocs.get(unwrap(handler));
