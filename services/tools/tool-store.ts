// The tenant tool registry in D1 (the `tools` table): create (at most MAX_TOOLS a tenant), list,
// get, change (optionally only while the endpoint and headers are as read), delete, and the rows
// one conversation may use. Header values are sealed before they are written and opened only by
// the caller at call time; what this module hands to the API carries header names alone.
import { and, count, desc, eq, exists, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { sortableId } from "../../core/ids";
import type { TenantToolKind } from "../../core/tenant-tool-rules";
import { tenants, tools } from "../../db/schema";
import { open, seal } from "./secret-box";
import { isUniqueViolation } from "../d1-batch";
import { projectQuery } from "../project-query";

export type ToolRow = typeof tools.$inferSelect;
type SecretEnv = { DB: D1Database; TOOL_SECRETS_KEY?: string };

export interface ToolFields {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  endpoint?: string | null;
  headers?: Record<string, string> | null;
  timeoutMs: number;
  maxResponseBytes: number;
  idempotent: boolean;
  retries: number;
}

export type ToolChange = Partial<ToolFields>;

/**
 * The most tools (of every kind and scope) one tenant may register. Each is a line of every one of
 * its conversations' system prompts (up to ~200 characters), so the count is capped: 200 lines are
 * ~10k tokens, well inside any model's context.
 */
export const MAX_TOOLS = 200;

/** A second tool with the same name in the same scope (tenant-wide, or one project). */
export class ToolNameTaken extends Error {
  constructor(readonly toolName: string) {
    super(`a tool named "${toolName}" already exists in this scope`);
  }
}

const headerOwner = (tenantId: string, toolId: string) => `${tenantId}:${toolId}:headers`;

async function sealHeaders(
  env: SecretEnv,
  {
    tenantId,
    toolId,
    headers,
  }: { tenantId: string; toolId: string; headers: Record<string, string> | null | undefined },
) {
  if (!headers || !Object.keys(headers).length) return { headerNames: "[]", sealedHeaders: null };
  return {
    headerNames: JSON.stringify(Object.keys(headers).sort()),
    sealedHeaders: await seal(env, headerOwner(tenantId, toolId), JSON.stringify(headers)),
  };
}

/** The tool's headers in the clear, for the outbound call only. */
export async function openHeaders(env: SecretEnv, row: ToolRow): Promise<Record<string, string>> {
  if (!row.sealedHeaders) return {};
  return JSON.parse(await open(env, headerOwner(row.tenantId, row.id), row.sealedHeaders)) as Record<string, string>;
}

/**
 * A new tool, or "limit" when the tenant has MAX_TOOLS already, or "no project" when its project
 * does not exist (deleted since the caller checked it: the row would outlive the project's delete).
 */
export async function createTool(
  env: SecretEnv,
  {
    tenantId,
    kind,
    projectId,
    fields,
  }: { tenantId: string; kind: TenantToolKind; projectId: string | null; fields: ToolFields },
): Promise<ToolRow | "limit" | "no project"> {
  const now = new Date().toISOString();
  const id = sortableId("tool");
  const { headers, inputSchema, endpoint, ...rest } = fields;
  const row: ToolRow = {
    id,
    tenantId,
    projectId,
    kind,
    ...rest,
    inputSchema: JSON.stringify(inputSchema),
    endpoint: endpoint ?? null,
    ...(await sealHeaders(env, { tenantId, toolId: id, headers })),
    createdAt: now,
    updatedAt: now,
  };
  // INSERT … SELECT from the tenant's own row, so the cap (and the project's existence) is checked
  // in the inserting statement: concurrent creates cannot pass it together, nor can a project
  // delete that lands between the route's check and this insert leave the row behind.
  const d = drizzle(env.DB);
  const inProject = projectId ? exists(projectQuery(d, tenantId, projectId)) : undefined;
  let inserted: D1Result;
  try {
    inserted = await d.insert(tools).select((qb) =>
      qb
        .select({
          id: sql<string>`${row.id}`.as("id"),
          tenantId: tenants.id,
          projectId: sql<string | null>`${row.projectId}`.as("project_id"),
          kind: sql<string>`${row.kind}`.as("kind"),
          name: sql<string>`${row.name}`.as("name"),
          description: sql<string>`${row.description}`.as("description"),
          inputSchema: sql<string>`${row.inputSchema}`.as("input_schema"),
          endpoint: sql<string | null>`${row.endpoint}`.as("endpoint"),
          headerNames: sql<string>`${row.headerNames}`.as("header_names"),
          sealedHeaders: sql<string | null>`${row.sealedHeaders}`.as("sealed_headers"),
          timeoutMs: sql<number>`${row.timeoutMs}`.as("timeout_ms"),
          maxResponseBytes: sql<number>`${row.maxResponseBytes}`.as("max_response_bytes"),
          idempotent: sql<boolean>`${row.idempotent ? 1 : 0}`.as("idempotent"),
          retries: sql<number>`${row.retries}`.as("retries"),
          createdAt: sql<string>`${row.createdAt}`.as("created_at"),
          updatedAt: sql<string>`${row.updatedAt}`.as("updated_at"),
        })
        .from(tenants)
        .where(
          and(
            eq(tenants.id, tenantId),
            lt(d.select({ n: count() }).from(tools).where(eq(tools.tenantId, tenantId)), MAX_TOOLS),
            inProject,
          ),
        ),
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw new ToolNameTaken(fields.name);
    throw err;
  }
  if (inserted.meta.changes) return row;
  return projectId && !(await projectQuery(d, tenantId, projectId).get()) ? "no project" : "limit";
}

export async function getTool(db: D1Database, tenantId: string, id: string): Promise<ToolRow | null> {
  return (
    (await drizzle(db)
      .select()
      .from(tools)
      .where(and(eq(tools.tenantId, tenantId), eq(tools.id, id)))
      .get()) ?? null
  );
}

/** Newest first; `before` is the last id of the previous page. */
export async function listTools(
  db: D1Database,
  { tenantId, limit, before }: { tenantId: string; limit: number; before?: string },
): Promise<ToolRow[]> {
  return drizzle(db)
    .select()
    .from(tools)
    .where(and(eq(tools.tenantId, tenantId), before ? lt(tools.id, before) : undefined))
    .orderBy(desc(tools.id))
    .limit(limit);
}

/** The tools a conversation of `projectId` (null: none) may use: the tenant-wide ones and its project's. */
const usableFrom = (projectId: string | null) =>
  projectId ? or(isNull(tools.projectId), eq(tools.projectId, projectId)) : isNull(tools.projectId);

/** The tools a conversation may use: the tenant's tenant-wide tools and its project's. */
export async function toolsInScope(db: D1Database, tenantId: string, projectId: string | null): Promise<ToolRow[]> {
  return drizzle(db)
    .select()
    .from(tools)
    .where(and(eq(tools.tenantId, tenantId), usableFrom(projectId)))
    .orderBy(tools.name);
}

/** Which of `names` a conversation of `projectId` (null: none) has as a registered tool: one query. */
export async function registeredNamesInScope(
  db: D1Database,
  { tenantId, projectId, names }: { tenantId: string; projectId: string | null; names: readonly string[] },
): Promise<Set<string>> {
  if (!names.length) return new Set();
  const rows = await drizzle(db)
    .select({ name: tools.name })
    .from(tools)
    .where(and(eq(tools.tenantId, tenantId), usableFrom(projectId), inArray(tools.name, [...names])));
  return new Set(rows.map((r) => r.name));
}

/**
 * The changed row; null when the tool does not exist for this tenant. `headers: null` removes them.
 * With `expected` (the row as the caller read it), the write happens only while the endpoint and
 * the sealed headers are still as read, else "changed": a change decided from that row (whether
 * the endpoint moved, and so whether the headers go) never lands on a row another request changed.
 */
export async function updateTool(
  env: SecretEnv,
  {
    tenantId,
    id,
    change,
    expected,
  }: {
    tenantId: string;
    id: string;
    change: ToolChange;
    expected?: Pick<ToolRow, "endpoint" | "sealedHeaders">;
  },
): Promise<ToolRow | null | "changed"> {
  const { headers, inputSchema, ...rest } = change;
  const set: Partial<ToolRow> = { ...rest, updatedAt: new Date().toISOString() };
  if (inputSchema !== undefined) set.inputSchema = JSON.stringify(inputSchema);
  if (headers !== undefined) Object.assign(set, await sealHeaders(env, { tenantId, toolId: id, headers }));
  const asRead = expected
    ? and(
        expected.endpoint === null ? isNull(tools.endpoint) : eq(tools.endpoint, expected.endpoint),
        expected.sealedHeaders === null ? isNull(tools.sealedHeaders) : eq(tools.sealedHeaders, expected.sealedHeaders),
      )
    : undefined;
  let row: ToolRow | undefined;
  try {
    [row] = await drizzle(env.DB)
      .update(tools)
      .set(set)
      .where(and(eq(tools.tenantId, tenantId), eq(tools.id, id), asRead))
      .returning();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ToolNameTaken(change.name ?? "");
    throw err;
  }
  if (row) return row;
  return expected && (await getTool(env.DB, tenantId, id)) ? "changed" : null;
}

export async function deleteTool(db: D1Database, tenantId: string, id: string): Promise<boolean> {
  const gone = await drizzle(db)
    .delete(tools)
    .where(and(eq(tools.tenantId, tenantId), eq(tools.id, id)))
    .returning({ id: tools.id });
  return gone.length > 0;
}

/** A project's tools go with it (its conversations stay, and must not keep seeing them). */
/** Deletes the project's tools; answers how many there were. */
export async function deleteProjectTools(db: D1Database, tenantId: string, projectId: string): Promise<number> {
  const result = await drizzle(db)
    .delete(tools)
    .where(and(eq(tools.tenantId, tenantId), eq(tools.projectId, projectId)));
  return result.meta.changes;
}

/** What the API shows of a tool: never a header value, never the sealed text. */
export function publicTool(row: ToolRow) {
  const base = {
    id: row.id,
    kind: row.kind,
    name: row.name,
    description: row.description,
    inputSchema: JSON.parse(row.inputSchema) as Record<string, unknown>,
    projectId: row.projectId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  if (row.kind !== "http") return base;
  return {
    ...base,
    endpoint: row.endpoint,
    headers: JSON.parse(row.headerNames) as string[],
    timeoutMs: row.timeoutMs,
    maxResponseBytes: row.maxResponseBytes,
    idempotent: row.idempotent,
    retries: row.retries,
  };
}
