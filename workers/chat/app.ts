// The chat worker's HTTP API (see API.md): one Hono app, one error shape, every /v1 route
// authenticated and scoped to the caller's tenant.
import { type Context, Hono } from "hono";
import { METHOD_NAME_ALL } from "hono/router";
import { matchedRoutes } from "hono/route";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { bearer, cachedKeyForHash, keyForHash } from "../../services/keys/auth";
import { allowedMethods } from "./allowed-methods";
import { ApiError, errorBody, unauthorized } from "./errors";
import { adminRoutes, requireAdminToken } from "./routes/admin";
import { automationRoutes } from "./routes/automations";
import { channelRoutes } from "./routes/channels";
import { conversationRoutes } from "./routes/conversations";
import { keyRoutes } from "./routes/keys";
import { corpusRoutes } from "./routes/corpus";
import { exportRoutes } from "./routes/exports";
import { mcpServerRoutes } from "./routes/mcp-servers";
import { memoryRoutes } from "./routes/memory";
import { modelRoutes } from "./routes/models";
import { usageRoutes } from "./routes/usage";
import { settingsRoutes } from "./routes/settings";
import { projectRoutes } from "./routes/projects";
import { searchRoutes } from "./routes/search";
import { toolRoutes } from "./routes/tools";
import type { AppEnv } from "./types";
import { consumeTicket } from "./ws-tickets";
import { rateLimited } from "./rate-limit";
import { clientAddress, countAuthFailure, isBlocked, refuseBlocked } from "./auth-failures";
import { d1Session } from "./d1-session";
import { EnvConfigError, envConfig } from "../../core/env-config";
import { sha256Hex } from "../../core/ids";
import { openApiDocument } from "./openapi/document";
import { doc, inputDocOf, routeDocOf } from "./openapi/registry";
import { refuseQuery } from "./validate";
import { requestId, requestIdOf } from "./request-id";
import { z } from "zod";

/** A turn (and a client tool's results) may carry a large paste or an inline image; every other body is small. */
const TURN_BODY_LIMIT = 12 * 1024 * 1024;
const BODY_LIMIT = 256 * 1024;
/** A multipart upload's complete lists up to 10,000 parts, each an etag of up to 200 characters. */
const COMPLETE_BODY_LIMIT = 3 * 1024 * 1024;
const UPLOAD_COMPLETE_PATH =
  /^\/v1\/(conversations\/[^/]+\/attachments|projects\/[^/]+\/files)\/uploads\/[^/]+\/complete$/;
const WS_PATH = /^\/v1\/conversations\/[^/]+\/ws$/;

export const app = new Hono<AppEnv>();

/** Cloudflare's edge allows more; no client of this API needs anywhere near this much. */
export const MAX_HEADER_BYTES = 32 * 1024;

// First, so that every answer leaves with the request's id (request-id.ts), errors and upgrades included.
app.use("*", requestId);

// Every /v1 answer is a tenant's data (or a refusal of a key): no browser or proxy keeps it. A
// route that says otherwise (the SSE stream's no-cache) keeps its own; an upgrade has no body.
app.use("/v1/*", async (c, next) => {
  await next();
  if (c.res.status === 101 || c.res.headers.has("cache-control")) return;
  try {
    c.res.headers.set("cache-control", "no-store");
  } catch {
    // Straight from a Durable Object or R2, its headers are immutable: copied once to add ours.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set("cache-control", "no-store");
  }
});

app.use("*", async (c, next) => {
  c.set("requestStart", Date.now());
  // A bad variable fails every request with its name (core/env-config.ts), /health included.
  envConfig(c.env);
  let size = 0;
  for (const [name, value] of c.req.raw.headers) size += name.length + value.length + 4;
  if (size > MAX_HEADER_BYTES)
    throw new ApiError(431, "request_header_fields_too_large", `request headers larger than ${MAX_HEADER_BYTES} bytes`);
  await next();
});

app.get(
  "/health",
  doc({
    summary: "Liveness",
    responses: { 200: { description: "The worker answers", schema: z.strictObject({ ok: z.literal(true) }) } },
  }),
  (c) => c.json({ ok: true }),
);

// Public metadata, like the web UI's files: it describes the API and holds nothing of a tenant's.
let documentCache: object | undefined;
app.get(
  "/openapi.json",
  doc({
    summary: "This API's OpenAPI 3.1 document",
    responses: {
      200: { description: "The document", content: { "application/json": { schema: { type: "object" } } } },
    },
  }),
  (c) => c.json((documentCache ??= openApiDocument(app.routes))),
);

const UPLOAD_PATH =
  /^\/v1\/((conversations\/[^/]+\/attachments|projects\/[^/]+\/files)(\/uploads\/[^/]+\/parts\/[^/]+)?|conversations\/import)$/;

app.use("/v1/*", async (c, next) => {
  // Upload bodies stream into R2 and are bounded by R2 and the platform, not buffered here (bodyLimit
  // holds a body without Content-Length whole while it counts); a transcript import counts its bytes
  // as it reads them (IMPORT_BODY_LIMIT, routes/import-new-conversation.ts).
  if ((c.req.method === "POST" || c.req.method === "PUT") && UPLOAD_PATH.test(c.req.path)) return next();
  // Bodies that carry conversation text (a turn, tool results, history imported into a conversation) get the larger limit.
  const carriesText =
    c.req.path.endsWith("/messages") || c.req.path.endsWith("/tool-results") || c.req.path.endsWith("/import");
  const limit =
    c.req.method === "POST" && carriesText
      ? TURN_BODY_LIMIT
      : c.req.method === "POST" && UPLOAD_COMPLETE_PATH.test(c.req.path)
        ? COMPLETE_BODY_LIMIT
        : BODY_LIMIT;
  return bodyLimit({
    maxSize: limit,
    onError: () => {
      throw new ApiError(413, "payload_too_large", `request body larger than ${limit} bytes`);
    },
  })(c, next);
});

app.use("/v1/*", async (c, next) => {
  // The operator's routes take the admin token instead of a key, the bare prefix included.
  if (c.req.path === "/v1/admin" || c.req.path.startsWith("/v1/admin/")) {
    await requireAdminToken(c);
    return next();
  }
  const address = clientAddress(c.req.header("cf-connecting-ip"));
  const key = bearer(c.req.header("authorization"));
  if (key) {
    const keyHash = await sha256Hex(key);
    // An address over its limit of failures gets no D1 read: only keys the caches know still pass.
    const active = isBlocked(c.env, address) ? await cachedKeyForHash(keyHash) : await keyForHash(c.env, keyHash);
    if (!active) {
      await countAuthFailure(c.env, address);
      throw unauthorized();
    }
    c.set("tenantId", active.tenantId);
    c.set("keyId", active.keyId);
    c.set("keyHash", keyHash);
    return rateLimited(c, keyHash, next);
  }
  // Browsers cannot set headers on a websocket: a single-use ticket stands in for the key there.
  const ticket = c.req.query("ticket");
  if (ticket && WS_PATH.test(c.req.path)) {
    // Checking a ticket spends it in D1, which an address over its limit of failures is not given.
    refuseBlocked(c.env, address);
    // A request that is no websocket upgrade is answered before its ticket is spent (the route's 426).
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
      throw new ApiError(426, "upgrade_required", "this route needs a websocket upgrade");
    const owner = await consumeTicket(c.env.DB, ticket);
    // A ticket is worth no more than the key that asked for it: once that key is revoked, so is the ticket.
    const issuer = owner?.keyHash ? await keyForHash(c.env, owner.keyHash) : null;
    if (!owner || (owner.keyHash && issuer?.tenantId !== owner.tenantId)) {
      await countAuthFailure(c.env, address);
      throw unauthorized("invalid, expired or used websocket ticket");
    }
    c.set("tenantId", owner.tenantId);
    c.set("ticketConversation", owner.conversationId);
    if (owner.keyHash) c.set("keyHash", owner.keyHash);
    return next();
  }
  throw unauthorized();
});

// After authentication: a key is looked up on the primary (the raw binding), never on a replica
// that might not have seen a revocation or a new key yet; every statement of the route itself
// runs in the request's session.
app.use("/v1/*", d1Session);

/**
 * Whether the route this request matched reads a query (query() in validate.ts, or doc's `query`
 * for a route that checks its own, as the socket's); null when no route matched (the 404).
 */
function routeTakesQuery(c: Context<AppEnv>): boolean | null {
  const routes = matchedRoutes(c);
  // The first route of a method is the one that answers; middleware (use) is registered as ALL.
  const route = routes.find((r) => r.method !== METHOD_NAME_ALL);
  if (!route) return null;
  return routes.some(
    (r) =>
      r.method === route.method &&
      r.path === route.path &&
      (inputDocOf(r.handler)?.query ?? routeDocOf(r.handler)?.query) !== undefined,
  );
}

// A route that declares no query takes none: a parameter it would ignore (DELETE ?dryRun=true) is a
// 400 naming it, as are broken percent-encoding and a repeated one, as on the routes with a query.
app.use("/v1/*", async (c, next) => {
  if (routeTakesQuery(c) === false) refuseQuery(c.req.url);
  await next();
});

app.route("/v1/admin", adminRoutes);
app.route("/v1/keys", keyRoutes({ tenantOf: async (c) => c.get("tenantId"), mayRevokeLast: false }));
app.route("/v1/conversations", conversationRoutes);
app.route("/v1/search", searchRoutes);
app.route("/v1/memory", memoryRoutes);
app.route("/v1/channels", channelRoutes);
app.route("/v1/automations", automationRoutes);
app.route("/v1/projects", projectRoutes);
app.route("/v1/corpus", corpusRoutes);
app.route("/v1/exports", exportRoutes);
app.route("/v1/mcp-servers", mcpServerRoutes);
app.route("/v1/tools", toolRoutes);
app.route("/v1/models", modelRoutes);
app.route("/v1/usage", usageRoutes);
app.route("/v1/settings", settingsRoutes);

app.notFound((c) => {
  const allowed = allowedMethods(app, c.req.path);
  if (!allowed.length) return c.json(errorBody(404, `no route for ${c.req.method} ${c.req.path}`), 404);
  c.header("allow", allowed.join(", "));
  return c.json(errorBody(405, `${c.req.path} takes ${allowed.join(", ")}, not ${c.req.method}`), 405);
});

app.onError((err, c) => {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json(errorBody(err.status, err.message, err.type), err.status);
  }
  if (err instanceof EnvConfigError) return c.json(errorBody(500, err.message, err.type), 500);
  if (err instanceof HTTPException)
    return c.json(errorBody(err.status, err.message), err.status as ContentfulStatusCode);
  console.error("unhandled error", `request ${requestIdOf(c)}`, c.req.method, c.req.path, err);
  return c.json(errorBody(500, "internal error"), 500);
});
