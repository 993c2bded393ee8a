// /v1/tools: the tenant's own tools (create, list, get, patch, delete). An `http` tool is an
// endpoint the platform calls; a `client` tool is run by the caller's application. Header values
// are write-only: sealed at rest, answered as names alone. A tenant has at most MAX_TOOLS; a PATCH
// writes only while the endpoint and headers are as it read them (else 409).
import { Hono } from "hono";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { OBJECT_SCHEMA_DOC } from "../../../core/client-tools";
import { refusingProtoKey } from "../../../core/validation";
import { checkOutboundUrl, loopbackAllowed } from "../../../core/outbound-url";
import * as rules from "../../../core/tenant-tool-rules";
import { toolRegistry } from "../../../agent/tools";
import { getProject } from "../../../services/projects";
import { ToolSecretsNotConfigured } from "../../../services/tools/secret-box";
import {
  createTool,
  deleteTool,
  getTool,
  listTools,
  MAX_TOOLS,
  publicTool,
  ToolNameTaken,
  updateTool,
  type ToolRow,
} from "../../../services/tools/tool-store";
import { ApiError, badRequest, notFound } from "../errors";
import { doc } from "../openapi/registry";
import { listOf, resource } from "../openapi/schemas";
import { idCursor, listBody, pageOf } from "../paging";
import type { AppEnv } from "../types";
import { intParam, jsonBody, query } from "../validate";

const tool = resource(
  "Tool",
  "A tenant's own tool (kind http or client); header values are never returned, only their names.",
);

export const toolRoutes = new Hono<AppEnv>();

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const name = z
  .string()
  .regex(rules.TOOL_NAME, "letters, digits, _ and - only, 1 to 64")
  .refine((n) => !toolRegistry.get(n), "is a built-in tool's name")
  .refine(
    (n) => !rules.SERVER_TOOL_NAMES.includes(n),
    "is a server tool's name (web_search, web_fetch, code_execution)",
  )
  .refine((n) => !n.startsWith(rules.MCP_PREFIX), `may not start with ${rules.MCP_PREFIX} (the MCP servers' tools)`);
const inputSchema = refusingProtoKey(
  z
    .record(z.string(), z.unknown())
    .superRefine((s, ctx) => {
      const problem = rules.inputSchemaProblem(s);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .meta(OBJECT_SCHEMA_DOC),
);
/** Header names are case-insensitive: two spellings of one would be sent joined ("a, b"), so a name is given once. */
function repeatedHeaderName(h: Record<string, string>): string | null {
  const seen = new Map<string, string>();
  for (const k of Object.keys(h)) {
    const first = seen.get(k.toLowerCase());
    if (first !== undefined) return `${first} given twice (as ${first} and ${k}; header names are case-insensitive)`;
    seen.set(k.toLowerCase(), k);
  }
  return null;
}
const headers = refusingProtoKey(
  z
    .record(
      z.string().regex(HEADER_NAME, "not a header name"),
      z.string().max(rules.HEADER_VALUE_MAX_CHARS).regex(rules.HEADER_VALUE, rules.HEADER_VALUE_RULE),
    )
    .refine((h) => Object.keys(h).length <= rules.MAX_HEADERS, `at most ${rules.MAX_HEADERS} headers`)
    .refine(
      (h) => !Object.keys(h).some((k) => rules.RESERVED_HEADERS.includes(k.toLowerCase())),
      `may not set ${rules.RESERVED_HEADERS.join(", ")} (the platform sets them)`,
    )
    .superRefine((h, ctx) => {
      const problem = repeatedHeaderName(h);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
);
const common = {
  name,
  description: z.string().trim().min(1).max(rules.DESCRIPTION_MAX_CHARS),
  inputSchema,
};
const httpFields = {
  endpoint: z.string().max(2_048),
  headers: headers.nullable(),
  timeoutMs: z.number().int().min(rules.MIN_TIMEOUT_MS).max(rules.MAX_TIMEOUT_MS),
  maxResponseBytes: z.number().int().min(1).max(rules.MAX_RESPONSE_BYTES),
  idempotent: z.boolean(),
  retries: z.number().int().min(0).max(rules.MAX_RETRIES),
};
const HTTP_ONLY = Object.keys(httpFields);
const RETRIES_NEED_IDEMPOTENT = "only an idempotent tool is retried; set idempotent: true or retries: 0";
const projectId = z
  .string()
  .refine((v) => isId("proj", v), "not a project id")
  .optional();
const retriesNeedIdempotent = (b: { retries?: number; idempotent?: boolean }, ctx: z.RefinementCtx) => {
  if ((b.retries ?? 0) > 0 && !b.idempotent)
    ctx.addIssue({ code: "custom", path: ["retries"], message: RETRIES_NEED_IDEMPOTENT });
};
/**
 * Both kinds in one object, its fields checked and then the rules between them: the 400s clients
 * have always read ("endpoint: required for an http tool", "timeoutMs: only for an http tool", …)
 * come from here, every problem of the body named as before.
 */
const flatCreateBody = z
  .strictObject({
    kind: z.enum(rules.TOOL_KINDS),
    projectId,
    ...common,
    endpoint: httpFields.endpoint.optional(),
    headers: headers.optional(),
    timeoutMs: httpFields.timeoutMs.optional(),
    maxResponseBytes: httpFields.maxResponseBytes.optional(),
    idempotent: httpFields.idempotent.optional(),
    retries: httpFields.retries.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.kind === "http" && b.endpoint === undefined)
      ctx.addIssue({ code: "custom", path: ["endpoint"], message: "required for an http tool" });
    if (b.kind === "client")
      for (const k of HTTP_ONLY)
        if (b[k as keyof typeof b] !== undefined)
          ctx.addIssue({ code: "custom", path: [k], message: "only for an http tool" });
    retriesNeedIdempotent(b, ctx);
  });
const httpTool = z
  .strictObject({
    kind: z.literal("http"),
    projectId,
    ...common,
    endpoint: httpFields.endpoint,
    headers: headers.optional(),
    timeoutMs: httpFields.timeoutMs.optional(),
    maxResponseBytes: httpFields.maxResponseBytes.optional(),
    idempotent: httpFields.idempotent.optional(),
    retries: httpFields.retries
      .optional()
      .meta({ description: "More than 0 only with `idempotent: true`: a call that may have run is not sent again" }),
  })
  .superRefine(retriesNeedIdempotent);
const clientTool = z.strictObject({ kind: z.literal("client"), projectId, ...common });
/**
 * The body is one arm per kind, as the document shows it and the handler reads it: an http tool
 * needs its endpoint, a client tool has none of the http fields. The flat check runs first so a
 * refused body is worded as it always was; the union alone would word it otherwise (a wrong kind
 * without the other fields' problems, a client tool's endpoint as an unknown field).
 */
const createBody = z.preprocess(
  (body, ctx) => {
    const flat = flatCreateBody.safeParse(body);
    // Any problem but unknown fields stops the body here. Past unknown fields zod goes on to the
    // union, whose arms are as strict and name the same ones: copied too, they would be named twice.
    if (!flat.success && flat.error.issues.some((i) => i.code !== "unrecognized_keys"))
      for (const issue of flat.error.issues) ctx.addIssue({ ...issue });
    return body;
  },
  z.discriminatedUnion("kind", [httpTool, clientTool]),
);
const patchBody = z
  .strictObject({ ...common, ...httpFields })
  .partial()
  .refine((b) => Object.keys(b).length > 0, "give at least one field");
const listQuery = z.strictObject({ limit: intParam(1, 100).default(20), cursor: idCursor("tool", "a tool id") });

const toolId = (id: string) => {
  if (!isId("tool", id)) throw notFound("tool");
  return id;
};

/** The endpoint as URL normalises it, or a 400 naming why the platform may not call it. */
function checkEndpoint(env: Env, endpoint: string | undefined): string | undefined {
  if (endpoint === undefined) return undefined;
  const check = checkOutboundUrl(endpoint, {
    allowLoopback: loopbackAllowed(env as { ALLOW_LOOPBACK_TOOLS?: string }),
  });
  if (!check.ok) throw badRequest(`endpoint: ${check.reason}`);
  return check.url.href;
}

const noSuchProject = () => badRequest("projectId: no such project");

async function storing<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ToolNameTaken) throw new ApiError(409, "conflict", `name: ${err.message}`);
    if (err instanceof ToolSecretsNotConfigured) throw new ApiError(503, err.type, err.message);
    throw err;
  }
}

toolRoutes.post(
  "/",
  doc({ summary: "Register a tool", responses: { 201: { description: "Registered", schema: tool } } }),
  ...jsonBody(createBody),
  async (c) => {
    const body = c.req.valid("json");
    const { kind, projectId, ...given } = body;
    const http = body.kind === "http" ? body : undefined;
    const fields = {
      ...given,
      timeoutMs: http?.timeoutMs ?? rules.DEFAULT_TIMEOUT_MS,
      maxResponseBytes: http?.maxResponseBytes ?? rules.DEFAULT_MAX_RESPONSE_BYTES,
      idempotent: http?.idempotent ?? false,
      retries: http?.retries ?? 0,
    };
    checkEndpoint(c.env, http?.endpoint);
    if (projectId && !(await getProject(c.env.DB, c.get("tenantId"), projectId))) throw noSuchProject();
    const row = await storing(() =>
      createTool(c.env, { tenantId: c.get("tenantId"), kind, projectId: projectId ?? null, fields }),
    );
    // The project was deleted after the check above: the insert, which requires it, wrote nothing.
    if (row === "no project") throw noSuchProject();
    if (row === "limit")
      throw new ApiError(
        409,
        "conflict",
        `the tenant has ${MAX_TOOLS} tools, the most it may have; delete one before registering another`,
      );
    return c.json(publicTool(row), 201);
  },
);

toolRoutes.get(
  "/",
  doc({ summary: "List tools", responses: { 200: { description: "A page", schema: listOf(tool) } } }),
  query(listQuery),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listTools(c.env.DB, { tenantId: c.get("tenantId"), limit: limit + 1, before: cursor });
    return c.json(listBody(pageOf(rows.map(publicTool), limit, (t) => t.id)));
  },
);

const found = async (c: { env: Env; get(k: "tenantId"): string }, id: string): Promise<ToolRow> => {
  const row = await getTool(c.env.DB, c.get("tenantId"), toolId(id));
  if (!row) throw notFound("tool");
  return row;
};

toolRoutes.get(
  "/:id",
  doc({ summary: "Get a tool", responses: { 200: { description: "The tool", schema: tool } } }),
  async (c) => c.json(publicTool(await found(c, c.req.param("id")))),
);

toolRoutes.patch(
  "/:id",
  doc({
    summary: "Change a tool",
    description: "A new endpoint (any other URL) removes the tool's headers unless the same request sets headers.",
    responses: { 200: { description: "The tool", schema: tool } },
  }),
  ...jsonBody(patchBody),
  async (c) => {
    const existing = await found(c, c.req.param("id"));
    const change = c.req.valid("json");
    if (existing.kind !== "http") {
      const extra = Object.keys(change).filter((k) => HTTP_ONLY.includes(k));
      if (extra.length) throw badRequest(`${extra[0]}: only for an http tool`);
    }
    const endpoint = checkEndpoint(c.env, change.endpoint);
    const idempotent = change.idempotent ?? existing.idempotent;
    if ((change.retries ?? existing.retries) > 0 && !idempotent)
      throw badRequest(`retries: ${RETRIES_NEED_IDEMPOTENT}`);
    // The headers were given for one destination: any other URL (another host, path or query) does
    // not inherit them, or any key of the tenant could point the tool at its own server and read
    // them. Only the same request may set headers for the new one. The write is conditional on the
    // endpoint and headers read here: a PATCH that moved the endpoint meanwhile makes this one a
    // 409, so headers set for the old endpoint never land on the new one.
    const moved = endpoint !== undefined && existing.endpoint !== null && endpoint !== new URL(existing.endpoint).href;
    const row = await storing(() =>
      updateTool(c.env, {
        tenantId: c.get("tenantId"),
        id: existing.id,
        change: moved && change.headers === undefined ? { ...change, headers: null } : change,
        expected: existing,
      }),
    );
    if (!row) throw notFound("tool");
    if (row === "changed")
      throw new ApiError(409, "conflict", "the tool changed while this request was made; read it again and retry");
    return c.json(publicTool(row));
  },
);

toolRoutes.delete(
  "/:id",
  doc({ summary: "Delete a tool", responses: { 204: { description: "Deleted" } } }),
  async (c) => {
    if (!(await deleteTool(c.env.DB, c.get("tenantId"), toolId(c.req.param("id"))))) throw notFound("tool");
    return c.body(null, 204);
  },
);
