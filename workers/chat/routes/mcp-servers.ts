// /v1/mcp-servers: a tenant's remote MCP servers (tenant-wide, or one project's) — register,
// list, get, change, delete, and refresh the cached tool list. The auth header is sealed at rest
// and never returned: an answer says only whether there is one and its header name. A tenant has
// at most MAX_MCP_SERVERS; a name follows MCP_SERVER_NAME (no "__"), which a row stored before that
// rule need not, until it is renamed.
import { Hono } from "hono";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { MCP_SERVER_NAME, MCP_SERVER_NAME_RULE } from "../../../core/mcp-names";
import { checkOutboundUrl, loopbackAllowed } from "../../../core/outbound-url";
import { HEADER_VALUE, HEADER_VALUE_RULE, MCP_RESERVED_HEADERS } from "../../../core/tenant-tool-rules";
import { authOwner, refreshListing } from "../../../services/mcp/listing";
import {
  cachedTools,
  createMcpServer,
  deleteMcpServer,
  getMcpServer,
  listMcpServers,
  MAX_MCP_SERVERS,
  McpNameTaken,
  newMcpServerId,
  updateMcpServer,
  type McpServerRow,
} from "../../../services/mcp/servers";
import { getProject } from "../../../services/projects";
import { seal, ToolSecretsNotConfigured } from "../../../services/tools/secret-box";
import { ApiError, badRequest, notFound } from "../errors";
import { doc } from "../openapi/registry";
import { listOf } from "../openapi/schemas";
import { idCursor, pageOf } from "../paging";
import type { AppEnv } from "../types";
import { intParam, jsonBody, query } from "../validate";

const server = z
  .looseObject({
    id: z.string(),
    tools: z.array(z.looseObject({ name: z.string(), mcpName: z.string(), description: z.string() })),
  })
  .meta({
    id: "McpServer",
    description: "A remote MCP server and its cached tool list (the auth header is never returned).",
  });
export const mcpServerRoutes = new Hono<AppEnv>();

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const auth = z.strictObject({
  name: z
    .string()
    .regex(HEADER_NAME, "an HTTP header name")
    .refine(
      (n) => !MCP_RESERVED_HEADERS.includes(n.toLowerCase()),
      `may not be ${MCP_RESERVED_HEADERS.join(", ")} (the MCP transport sets them)`,
    )
    .default("authorization"),
  value: z
    .string()
    .min(1)
    .max(4096)
    .regex(HEADER_VALUE, HEADER_VALUE_RULE)
    // Sent trimmed (fetch strips spaces and tabs around a header value): blank would go out empty.
    .refine((v) => v.trim().length > 0, "must hold more than spaces and tabs"),
});
const fields = {
  name: z.string().regex(MCP_SERVER_NAME, MCP_SERVER_NAME_RULE),
  url: z.string().max(2048),
  projectId: z
    .string()
    .refine((v) => isId("proj", v), "not a project id (proj_…)")
    .nullable(),
  auth: auth.nullable(),
  timeoutMs: z.number().int().min(1_000).max(120_000),
};
// null means "remove" and so belongs to PATCH only.
const createBody = z.strictObject({
  ...fields,
  projectId: fields.projectId.unwrap().optional(),
  auth: auth.optional(),
  timeoutMs: fields.timeoutMs.optional(),
});
const patchBody = z
  .strictObject(fields)
  .partial()
  .refine((b) => Object.keys(b).length > 0, "give at least one field");
const listQuery = z.strictObject({ limit: intParam(1, 100).default(50), cursor: idCursor("mcp", "an MCP server id") });

const serverId = (id: string) => {
  if (!isId("mcp", id)) throw notFound("MCP server");
  return id;
};

function publicServer(row: McpServerRow) {
  const { tenantId: _t, authSealed, tools: _tools, ...rest } = row;
  const tools = cachedTools(row).map(({ name, mcpName, description }) => ({ name, mcpName, description }));
  return { ...rest, hasAuth: authSealed !== null, tools };
}

function checkedUrl(env: Env, url: string): string {
  const check = checkOutboundUrl(url, { allowLoopback: loopbackAllowed(env) });
  if (!check.ok) throw badRequest(`url: ${check.reason}`);
  return check.url.href;
}

const noSuchProject = () => badRequest("projectId: no such project");

async function checkProject(env: Env, tenantId: string, projectId: string | null | undefined) {
  if (projectId && !(await getProject(env.DB, tenantId, projectId))) throw noSuchProject();
}

async function sealAuth(
  env: Env,
  owner: Pick<McpServerRow, "tenantId" | "id">,
  value: z.infer<typeof auth> | null | undefined,
): Promise<string | null> {
  if (!value) return null;
  try {
    return await seal(env, authOwner(owner), JSON.stringify(value));
  } catch (err) {
    if (err instanceof ToolSecretsNotConfigured) throw new ApiError(503, err.type, err.message);
    throw err;
  }
}

const nameTaken = (name: string) => new ApiError(409, "conflict", `an MCP server named "${name}" already exists`);

mcpServerRoutes.post(
  "/",
  doc({
    summary: "Register an MCP server (its tools are listed at once)",
    responses: { 201: { description: "Registered", schema: server } },
  }),
  ...jsonBody(createBody),
  async (c) => {
    const tenantId = c.get("tenantId");
    const body = c.req.valid("json");
    const url = checkedUrl(c.env, body.url);
    await checkProject(c.env, tenantId, body.projectId);
    const id = newMcpServerId();
    const authSealed = await sealAuth(c.env, { tenantId, id }, body.auth);
    let row: McpServerRow | "limit" | "no project";
    try {
      row = await createMcpServer(c.env.DB, {
        id,
        tenantId,
        projectId: body.projectId ?? null,
        name: body.name,
        url,
        authSealed,
        timeoutMs: body.timeoutMs ?? 30_000,
      });
    } catch (err) {
      if (err instanceof McpNameTaken) throw nameTaken(body.name);
      throw err;
    }
    // The project was deleted after checkProject saw it: the insert, which requires it, wrote nothing.
    if (row === "no project") throw noSuchProject();
    if (row === "limit")
      throw new ApiError(
        409,
        "conflict",
        `the tenant has ${MAX_MCP_SERVERS} MCP servers, the most it may have; delete one before registering another`,
      );
    return c.json(publicServer(await refreshListing(c.env, row)), 201);
  },
);

mcpServerRoutes.get(
  "/",
  doc({ summary: "List MCP servers", responses: { 200: { description: "A page", schema: listOf(server) } } }),
  query(listQuery),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listMcpServers(c.env.DB, { tenantId: c.get("tenantId"), limit: limit + 1, before: cursor });
    return c.json(pageOf(rows.map(publicServer), limit, (s) => s.id));
  },
);

mcpServerRoutes.get(
  "/:id",
  doc({ summary: "Get an MCP server", responses: { 200: { description: "The server", schema: server } } }),
  async (c) => {
    const row = await getMcpServer(c.env.DB, c.get("tenantId"), serverId(c.req.param("id")));
    if (!row) throw notFound("MCP server");
    return c.json(publicServer(row));
  },
);

mcpServerRoutes.patch(
  "/:id",
  doc({
    summary: "Change an MCP server (a new name, url or auth lists its tools again)",
    description: "A new url (any other URL) removes the auth header unless the same request sets auth.",
    responses: { 200: { description: "The server", schema: server } },
  }),
  ...jsonBody(patchBody),
  async (c) => {
    const tenantId = c.get("tenantId");
    const id = serverId(c.req.param("id"));
    const body = c.req.valid("json");
    const existing = await getMcpServer(c.env.DB, tenantId, id);
    if (!existing) throw notFound("MCP server");
    const url = body.url === undefined ? undefined : checkedUrl(c.env, body.url);
    await checkProject(c.env, tenantId, body.projectId);
    // The auth header was given for one URL: another one (host, path or query) does not inherit it,
    // or any key of the tenant could point the server at its own and read it. Only the same request
    // may set one for the new URL.
    const moved = url !== undefined && url !== existing.url;
    const change = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(url !== undefined ? { url } : {}),
      ...(body.projectId !== undefined ? { projectId: body.projectId } : {}),
      ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}),
      ...(body.auth !== undefined
        ? { authSealed: await sealAuth(c.env, { tenantId, id }, body.auth) }
        : moved
          ? { authSealed: null }
          : {}),
    };
    let row: McpServerRow | null | "changed" | "no project";
    try {
      // Written only over the url and auth this request read: its `moved` holds for the row it changes.
      row = await updateMcpServer(c.env.DB, { tenantId, id, change, expected: existing });
    } catch (err) {
      if (err instanceof McpNameTaken) throw nameTaken(body.name!);
      throw err;
    }
    // The project was deleted after checkProject saw it: the update, which requires it, wrote nothing.
    if (row === "no project") throw noSuchProject();
    if (row === "changed")
      throw new ApiError(
        409,
        "conflict",
        "the MCP server changed while this request was made; read it again and retry",
      );
    if (!row) throw notFound("MCP server");
    const relist = body.name !== undefined || body.url !== undefined || body.auth !== undefined;
    return c.json(publicServer(relist ? await refreshListing(c.env, row) : row));
  },
);

mcpServerRoutes.delete(
  "/:id",
  doc({ summary: "Delete an MCP server", responses: { 204: { description: "Deleted" } } }),
  async (c) => {
    if (!(await deleteMcpServer(c.env.DB, c.get("tenantId"), serverId(c.req.param("id")))))
      throw notFound("MCP server");
    return c.body(null, 204);
  },
);

mcpServerRoutes.post(
  "/:id/refresh",
  doc({
    summary: "List an MCP server's tools again",
    responses: { 200: { description: "The server with its new list", schema: server } },
  }),
  async (c) => {
    const row = await getMcpServer(c.env.DB, c.get("tenantId"), serverId(c.req.param("id")));
    if (!row) throw notFound("MCP server");
    return c.json(publicServer(await refreshListing(c.env, row)));
  },
);
