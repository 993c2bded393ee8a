// The OpenAPI 3.1 document, read off the app's registered routes (see registry.ts): one operation
// per registered method and path, its input described by the zod schemas that validate it.
import type { RouterRoute } from "hono/types";
import { z } from "zod";
import { BOOKMARK_HEADER } from "../d1-session";
import { REQUEST_ID_HEADER } from "../request-id";
import { CORTEX_BOOKMARK_HEADER } from "../routes/search";
import { type HeaderDoc, inputDocOf, routeDocOf, type InputDoc, type RouteDoc } from "./registry";
import { errorSchema, socketServerFrameSchema, turnEventSchema } from "./schemas";
import { intParamBounds } from "../validate";
import { clientFrameSchema } from "../../../durable-objects/conversation/socket-frames";

type Json = Record<string, unknown>;

const COMPONENT_REF = "#/components/schemas/";

/**
 * One zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect). Named schemas (meta id) move to
 * components.schemas and are referenced from there. `io: "input"` describes what a client sends,
 * before transforms and defaults.
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output", components: Json): Json {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any", reused: "inline", override: statedInteger }) as Json;
  delete out.$schema;
  const defs = (out.$defs ?? {}) as Record<string, Json>;
  delete out.$defs;
  const fix = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(fix);
    if (!v || typeof v !== "object") return v;
    const o: Json = {};
    for (const [k, x] of Object.entries(v))
      o[k] = k === "$ref" && typeof x === "string" ? x.replace("#/$defs/", COMPONENT_REF) : fix(x);
    return o;
  };
  for (const [id, def] of Object.entries(defs)) components[id] = fix(def);
  const fixed = fix(out) as Json;
  const id = z.globalRegistry.get(schema)?.id;
  // A named top-level schema comes back either as a $ref into its own $defs (moved above) or inline.
  if (typeof id === "string" && !fixed.$ref) {
    const { id: _id, ...rest } = fixed;
    components[id] = rest;
    return { $ref: COMPONENT_REF + id };
  }
  return fixed;
}

/**
 * An integer query parameter (validate.ts intParam) as the integer a client sends, with its bounds
 * and default: converted as it is checked, it would read only as a string of digits, since the
 * bounds apply after the text becomes a number and a default is the number, not the text. A
 * `cursor` stays that string: a client passes back a page's `next` as it came, never a number of
 * its own, and the lists type `next` as a string or a number.
 */
function statedInteger(ctx: {
  zodSchema: z.core.$ZodTypes;
  jsonSchema: z.core.JSONSchema.BaseSchema;
  path: (string | number)[];
}): void {
  const { zodSchema, jsonSchema: js, path } = ctx;
  if (path.at(-1) === "cursor") return;
  const bounds = intParamBounds.get(zodSchema);
  if (bounds) {
    for (const k of Object.keys(js)) delete js[k];
    Object.assign(js, { type: "integer", ...bounds });
  }
  const def = zodSchema._zod.def;
  if (def.type === "default" && intParamBounds.has(def.innerType)) js.default = def.defaultValue;
}

const errorRef = { $ref: "#/components/responses/Error" };
const rateLimitedRef = { $ref: "#/components/responses/RateLimited" };
const requestIdRef = { $ref: "#/components/headers/RequestId" };

const headerObject = (h: HeaderDoc): Json =>
  "shared" in h
    ? { $ref: `#/components/headers/${h.shared}` }
    : { description: h.description, schema: { type: "string" } };

/**
 * An answer's headers: request-id on every answer, x-d1-bookmark on every /v1 answer but a
 * websocket upgrade's 101, then the route's own; an operation that reads Idempotency-Key may answer its success as a
 * replay (Idempotent-Replayed) and its 409 idempotency_in_progress with Retry-After (1 s).
 */
function answerHeaders(at: {
  status: string;
  inSession: boolean;
  idempotent: boolean;
  own?: Record<string, HeaderDoc>;
}): Json {
  const { status, inSession, idempotent, own } = at;
  const headers: Json = { [REQUEST_ID_HEADER]: requestIdRef };
  if (inSession && status !== "101") headers[BOOKMARK_HEADER] = { $ref: "#/components/headers/D1Bookmark" };
  if (idempotent && /^2\d\d$/.test(status))
    headers["idempotent-replayed"] = headerObject({ shared: "IdempotentReplayed" });
  if (idempotent && status === "409") headers["retry-after"] = headerObject({ shared: "RetryAfter" });
  for (const [name, h] of Object.entries(own ?? {})) headers[name] = headerObject(h);
  return headers;
}

function security(path: string, method: string): Json[] | undefined {
  if (!path.startsWith("/v1/")) return [];
  if (path.startsWith("/v1/admin/")) return [{ adminToken: [] }];
  if (method === "get" && path.endsWith("/ws")) return [{ apiKey: [] }, { wsTicket: [] }];
  return [{ apiKey: [] }];
}

function operation(route: {
  method: string;
  path: string;
  d: RouteDoc | undefined;
  input: InputDoc;
  components: Json;
}): Json {
  const { method, path, d, input, components } = route;
  const params: Json[] = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const querySchema = input.query ?? d?.query;
  if (querySchema) {
    const q = jsonSchema(querySchema, "input", components) as {
      properties?: Record<string, Json>;
      required?: string[];
    };
    for (const [name, schema] of Object.entries(q.properties ?? {}))
      params.push({ name, in: "query", required: q.required?.includes(name) ?? false, schema });
  }
  for (const h of d?.headers ?? [])
    params.push(
      "shared" in h
        ? { $ref: `#/components/parameters/${h.shared}` }
        : { name: h.name, in: "header", required: false, description: h.description, schema: { type: "string" } },
    );
  const idempotent = (d?.headers ?? []).some((h) => "name" in h && h.name.toLowerCase() === "idempotency-key");
  // Every /v1 request runs in one D1 session (workers/chat/d1-session.ts): it takes a bookmark and answers one.
  const inSession = path.startsWith("/v1/");
  if (inSession) params.push({ $ref: "#/components/parameters/D1Bookmark" });
  const op: Json = { operationId: `${method} ${path}`, summary: d?.summary ?? `${method.toUpperCase()} ${path}` };
  if (d?.description) op.description = d.description;
  const tag = path.split("/")[2];
  if (tag) op.tags = [tag];
  if (params.length) op.parameters = params;
  if (input.json)
    op.requestBody = {
      required: true,
      content: { "application/json": { schema: jsonSchema(input.json, "input", components) } },
    };
  else if (d?.rawBody)
    op.requestBody = {
      required: true,
      description: d.rawBody.description,
      content: d.rawBody.content ?? {
        "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
      },
    };
  const responses: Json = {};
  for (const [status, r] of Object.entries(d?.responses ?? { 200: { description: "OK" } })) {
    const content: Json = { ...(r.content ?? {}) };
    if (r.schema) content["application/json"] = { schema: jsonSchema(r.schema, "output", components) };
    const headers = answerHeaders({ status, inSession, idempotent, own: r.headers });
    responses[status] = {
      description: r.description,
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(Object.keys(content).length ? { content } : {}),
    };
  }
  // Every /v1 request is authenticated, and any may be over a limit (rate-limit.ts, auth-failures.ts).
  if (path.startsWith("/v1/")) responses["429"] ??= rateLimitedRef;
  responses.default = errorRef;
  op.responses = responses;
  const sec = security(path, method);
  if (sec) op.security = sec;
  Object.assign(op, d?.extensions ?? {});
  return op;
}

export function openApiDocument(routes: RouterRoute[]): Json {
  const components: Json = {};
  const grouped = new Map<string, { method: string; path: string; doc?: RouteDoc; input: InputDoc }>();
  for (const r of routes) {
    if (r.method === "ALL") continue;
    const method = r.method.toLowerCase();
    const path = (r.path.replace(/\/$/, "") || "/").replace(/:(\w+)/g, "{$1}");
    const key = `${method} ${path}`;
    const entry = grouped.get(key) ?? { method, path, input: {} };
    entry.doc ??= routeDocOf(r.handler);
    Object.assign(entry.input, inputDocOf(r.handler));
    grouped.set(key, entry);
  }
  const paths: Record<string, Json> = {};
  for (const { method, path, doc, input } of [...grouped.values()].sort(
    (a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method),
  )) {
    (paths[path] ??= {})[method] = operation({ method, path, d: doc, input, components });
  }
  // Streams are not operations: their messages are named here and pointed at from the routes.
  // What the server sends is described as it comes out; a client's frames as the server takes them
  // in (before defaults: a tool's `description` may be left out).
  for (const s of [errorSchema, turnEventSchema, socketServerFrameSchema]) jsonSchema(s, "output", components);
  jsonSchema(clientFrameSchema, "input", components);
  return {
    openapi: "3.1.0",
    info: {
      title: "context-chat",
      version: "1",
      description:
        "A hosted, context-managed chat API. Every error is `Error`. A turn streams `TurnEvent`s as server-sent events when asked with `Accept: text/event-stream`; the websocket route exchanges `SocketClientFrame`s and `SocketServerFrame`s (see its x-websocket).",
    },
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      responses: {
        Error: {
          description: "An error (4xx or 5xx)",
          headers: { [REQUEST_ID_HEADER]: requestIdRef },
          content: { "application/json": { schema: { $ref: `${COMPONENT_REF}Error` } } },
        },
        RateLimited: {
          description:
            "rate_limited: the API key or its tenant is over a limit of requests or turns per minute, or the client's address over its limit of failed authentications. Answered before the request's D1 session: no x-d1-bookmark.",
          headers: { [REQUEST_ID_HEADER]: requestIdRef, "retry-after": { $ref: "#/components/headers/RetryAfter" } },
          content: { "application/json": { schema: { $ref: `${COMPONENT_REF}Error` } } },
        },
      },
      parameters: {
        D1Bookmark: {
          name: BOOKMARK_HEADER,
          in: "header",
          required: false,
          description:
            "The bookmark of an earlier answer: this request's reads see at least what that answer's request had written (D1 read replication). Without it, reads may come from any replica.",
          schema: { type: "string", maxLength: 256 },
        },
        CortexBookmark: {
          name: CORTEX_BOOKMARK_HEADER,
          in: "header",
          required: false,
          description:
            "The x-cortex-bookmark of an earlier answer (`<bookmark>@<shard>`): the search reads the tenant's cortex shard at least that far (a search or a write of notes, pages or a deletion). One of a shard the tenant has moved from is not used; a malformed one is a 400. Without it the search reads wherever is nearest.",
          schema: { type: "string", maxLength: 256 },
        },
      },
      headers: {
        RequestId: {
          description:
            "This request's id, on every answer (JSON, errors, SSE streams, a websocket upgrade's 101; not the web UI's static files): the edge's cf-ray when the request came through Cloudflare, else a fresh `req_…` id. A request-id the client sends is never taken. Error bodies keep their one shape (no id in them): quote this header when reporting a failed call.",
          schema: { type: "string" },
        },
        D1Bookmark: {
          description:
            "Where this request's reads and writes reached (one that read and wrote nothing answers the bookmark it was sent, or without one a recent position): send it back as the request header to read your own writes.",
          schema: { type: "string" },
        },
        CortexBookmark: {
          description:
            "Where this request's read or write reached the tenant's cortex shard (`<bookmark>@<shard>`; its database is not DB, so x-d1-bookmark cannot carry it): send the newest as the x-cortex-bookmark of GET /v1/search to find your own writes. Absent when the request reached no shard.",
          schema: { type: "string" },
        },
        RetryAfter: {
          description: "Seconds to wait before sending the request again.",
          schema: { type: "string", pattern: "^[0-9]+$" },
        },
        IdempotentReplayed: {
          description:
            "`true` when this is the first outcome of the request's Idempotency-Key answered again (nothing ran or was created a second time); absent otherwise.",
          schema: { type: "string", const: "true" },
        },
        ConversationId: {
          description:
            "The conversation the turn ran in (a channel's current one), on an answer that carries the turn.",
          schema: { type: "string" },
        },
        ServerTiming: {
          description:
            "On a JSON answer of a turn that ended: `app;dur=…, model;dur=…, queue;dur=…` in milliseconds (not on an SSE stream, sent before the turn ends).",
          schema: { type: "string" },
        },
      },
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "A tenant API key (ck_…)" },
        adminToken: { type: "http", scheme: "bearer", description: "The operator's ADMIN_TOKEN" },
        wsTicket: {
          type: "apiKey",
          in: "query",
          name: "ticket",
          description:
            "A single-use ticket from POST /v1/conversations/{id}/ws-ticket (browsers cannot set headers on a websocket)",
        },
      },
    },
  };
}
