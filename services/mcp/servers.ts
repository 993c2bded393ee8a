// The mcp_servers table: a tenant's registered MCP servers (at most MAX_MCP_SERVERS) and each
// one's cached tool list. Every query is scoped to the tenant, so another tenant's id reads as a
// missing row.
import { and, count, desc, eq, exists, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { mcpServers, tenants } from "../../db/schema";
import { sortableId } from "../../core/ids";
import { mcpToolName } from "../../core/mcp-names";
import { isUniqueViolation } from "../d1-batch";
import { projectQuery } from "../project-query";

export type McpServerRow = typeof mcpServers.$inferSelect;

/** One tool of a server as cached: the name the model sees, the server's own name, its schema. */
export interface McpToolEntry {
  name: string;
  mcpName: string;
  description: string;
  /** As the server published it (any JSON): agent/tools/mcp-tools.ts judges it when offered. */
  inputSchema: unknown;
}

export interface McpListing {
  /** null when the listing failed (no connection): the last good list is kept. */
  transport: string | null;
  tools: McpToolEntry[];
  listedAt: string;
  error: string | null;
}

export class McpNameTaken extends Error {}

/**
 * The most bytes a server's tool list may take as stored (its JSON, UTF-8). D1 refuses a row past
 * 2 MB (2,000,000 bytes), while one MCP message may carry 6 MiB: a larger list is not stored (its
 * toolsError says so), with room left for the row's other columns.
 */
export const MAX_STORED_TOOLS_BYTES = 1_500_000;

/**
 * The most MCP servers one tenant may register (tenant-wide and projects' together). Each is a line
 * of every one of its conversations' system prompts, and its tools are offered by tool_search.
 */
export const MAX_MCP_SERVERS = 50;

/**
 * A new server, or "limit" when the tenant has MAX_MCP_SERVERS already, or "no project" when its
 * project does not exist (deleted since the caller checked it: the row, its sealed auth with it,
 * would outlive the project's delete).
 */
export async function createMcpServer(
  db: D1Database,
  row: Omit<McpServerRow, "createdAt" | "updatedAt" | "tools" | "toolsListedAt" | "toolsError" | "transport">,
): Promise<McpServerRow | "limit" | "no project"> {
  const now = new Date().toISOString();
  const full: McpServerRow = {
    ...row,
    transport: null,
    tools: "[]",
    toolsListedAt: null,
    toolsError: null,
    createdAt: now,
    updatedAt: now,
  };
  // INSERT … SELECT from the tenant's own row, so the cap (and the project's existence) is checked
  // in the inserting statement: concurrent registrations cannot pass it together, nor can a
  // project delete that lands between the route's check and this insert leave the row behind.
  const d = drizzle(db);
  const inProject = row.projectId ? exists(projectQuery(d, row.tenantId, row.projectId)) : undefined;
  let inserted: D1Result;
  try {
    inserted = await d.insert(mcpServers).select((qb) =>
      qb
        .select({
          id: sql<string>`${full.id}`.as("id"),
          tenantId: tenants.id,
          projectId: sql<string | null>`${full.projectId}`.as("project_id"),
          name: sql<string>`${full.name}`.as("name"),
          url: sql<string>`${full.url}`.as("url"),
          authSealed: sql<string | null>`${full.authSealed}`.as("auth_sealed"),
          transport: sql<string | null>`${full.transport}`.as("transport"),
          timeoutMs: sql<number>`${full.timeoutMs}`.as("timeout_ms"),
          tools: sql<string>`${full.tools}`.as("tools"),
          toolsListedAt: sql<string | null>`${full.toolsListedAt}`.as("tools_listed_at"),
          toolsError: sql<string | null>`${full.toolsError}`.as("tools_error"),
          createdAt: sql<string>`${full.createdAt}`.as("created_at"),
          updatedAt: sql<string>`${full.updatedAt}`.as("updated_at"),
        })
        .from(tenants)
        .where(
          and(
            eq(tenants.id, row.tenantId),
            lt(d.select({ n: count() }).from(mcpServers).where(eq(mcpServers.tenantId, row.tenantId)), MAX_MCP_SERVERS),
            inProject,
          ),
        ),
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw new McpNameTaken();
    throw err;
  }
  if (inserted.meta.changes) return full;
  return row.projectId && !(await projectQuery(d, row.tenantId, row.projectId).get()) ? "no project" : "limit";
}

export const newMcpServerId = () => sortableId("mcp");

export async function getMcpServer(db: D1Database, tenantId: string, id: string): Promise<McpServerRow | null> {
  return (
    (await drizzle(db)
      .select()
      .from(mcpServers)
      .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.id, id)))
      .get()) ?? null
  );
}

export async function listMcpServers(
  db: D1Database,
  { tenantId, limit, before }: { tenantId: string; limit: number; before?: string },
): Promise<McpServerRow[]> {
  return drizzle(db)
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), before ? lt(mcpServers.id, before) : undefined))
    .orderBy(desc(mcpServers.id))
    .limit(limit);
}

/** The servers a conversation of `projectId` (null: none) sees: the tenant-wide ones and its project's. */
const seenFrom = (projectId: string | null) =>
  projectId ? or(isNull(mcpServers.projectId), eq(mcpServers.projectId, projectId)) : isNull(mcpServers.projectId);

/** The servers a conversation sees: the tenant-wide ones and its project's. */
export async function mcpServersInScope(
  db: D1Database,
  tenantId: string,
  projectId: string | null,
): Promise<McpServerRow[]> {
  return drizzle(db)
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), seenFrom(projectId)))
    .orderBy(mcpServers.name);
}

/** The servers named `names` among those a conversation of `projectId` (null: none) sees. */
export async function mcpServersNamedInScope(
  db: D1Database,
  { tenantId, projectId, names }: { tenantId: string; projectId: string | null; names: readonly string[] },
): Promise<McpServerRow[]> {
  if (!names.length) return [];
  return drizzle(db)
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), seenFrom(projectId), inArray(mcpServers.name, [...names])));
}

/**
 * The changed row; null when the server does not exist for this tenant. With `expected` (the row as
 * the caller read it), the write happens only while the url and the sealed auth are still as read,
 * else "changed": a change decided from that row (whether the url moved, and so whether the auth
 * goes) never lands on a row another request changed. A move into a project happens only while that
 * project exists, else "no project" (deleted since the caller checked it: the server would be
 * seen by no conversation, and outlive the project's delete).
 */
export async function updateMcpServer(
  db: D1Database,
  {
    tenantId,
    id,
    change,
    expected,
  }: {
    tenantId: string;
    id: string;
    change: Partial<Pick<McpServerRow, "name" | "url" | "authSealed" | "projectId" | "timeoutMs">>;
    expected?: Pick<McpServerRow, "url" | "authSealed">;
  },
): Promise<McpServerRow | null | "changed" | "no project"> {
  const d = drizzle(db);
  const inProject = change.projectId ? exists(projectQuery(d, tenantId, change.projectId)) : undefined;
  const asRead = expected
    ? and(
        eq(mcpServers.url, expected.url),
        expected.authSealed === null ? isNull(mcpServers.authSealed) : eq(mcpServers.authSealed, expected.authSealed),
      )
    : undefined;
  let rows: McpServerRow[];
  try {
    rows = await d
      .update(mcpServers)
      .set({ ...change, updatedAt: new Date().toISOString() })
      .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.id, id), asRead, inProject))
      .returning();
  } catch (err) {
    if (isUniqueViolation(err)) throw new McpNameTaken();
    throw err;
  }
  if (rows[0]) return rows[0];
  if (!(await getMcpServer(db, tenantId, id))) return null;
  if (change.projectId && !(await projectQuery(d, tenantId, change.projectId).get())) return "no project";
  return expected ? "changed" : null;
}

/**
 * Stores a listing, only while the server still has the name, url and auth it was listed under
 * (`listedAs`, the row the listing started from): a listing that raced a rename would store its
 * tools under the old name (which another server may then take, its calls reaching this server
 * with this server's auth), and one that raced a url or auth change the old endpoint's tools. Such
 * a stale listing is dropped (null): the change that made it stale lists again itself. Null also
 * when the server is gone.
 */
export async function saveMcpListing(
  db: D1Database,
  {
    tenantId,
    id,
    listing,
    listedAs,
  }: { tenantId: string; id: string; listing: McpListing; listedAs: Pick<McpServerRow, "name" | "url" | "authSealed"> },
): Promise<McpServerRow | null> {
  const tools = JSON.stringify(listing.tools);
  const bytes = new TextEncoder().encode(tools).byteLength;
  const tooLarge =
    bytes > MAX_STORED_TOOLS_BYTES
      ? `the tool list is ${bytes} bytes as stored, more than the ${MAX_STORED_TOOLS_BYTES} one server's list may take; the last good list is kept`
      : null;
  // A failed listing keeps the last good tool list: a server that is down for a moment does not
  // take its tools away; the error says why the list may be stale. So does a list too large to store.
  const failed = tooLarge !== null || (listing.error !== null && listing.transport === null);
  const error = tooLarge ? [tooLarge, listing.error].filter(Boolean).join("; ") : listing.error;
  const set = failed
    ? { toolsListedAt: listing.listedAt, toolsError: error, ...(await keptUnderCurrentName(db, tenantId, id)) }
    : { transport: listing.transport, tools, toolsListedAt: listing.listedAt, toolsError: error };
  const asListed = and(
    eq(mcpServers.name, listedAs.name),
    eq(mcpServers.url, listedAs.url),
    listedAs.authSealed === null ? isNull(mcpServers.authSealed) : eq(mcpServers.authSealed, listedAs.authSealed),
  );
  const rows = await drizzle(db)
    .update(mcpServers)
    .set(set)
    .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.id, id), asListed))
    .returning();
  return rows[0] ?? null;
}

/**
 * The last good list, its tools named after the server's current name: a server renamed while it
 * is down keeps its tools under the new name, never the old one (which another server may take).
 */
async function keptUnderCurrentName(db: D1Database, tenantId: string, id: string): Promise<{ tools?: string }> {
  const row = await getMcpServer(db, tenantId, id);
  if (!row) return {};
  const kept = cachedTools(row);
  const renamed = await Promise.all(kept.map(async (t) => ({ ...t, name: await mcpToolName(row.name, t.mcpName) })));
  return renamed.some((t, i) => t.name !== kept[i].name) ? { tools: JSON.stringify(renamed) } : {};
}

export async function deleteMcpServer(db: D1Database, tenantId: string, id: string): Promise<boolean> {
  const rows = await drizzle(db)
    .delete(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.id, id)))
    .returning({ id: mcpServers.id });
  return rows.length > 0;
}

/** A deleted project takes its MCP servers with it (their sealed headers included). */
/** Deletes the project's MCP servers; answers how many there were. */
export async function deleteProjectMcpServers(db: D1Database, tenantId: string, projectId: string): Promise<number> {
  const result = await drizzle(db)
    .delete(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.projectId, projectId)));
  return result.meta.changes;
}

export const cachedTools = (row: McpServerRow): McpToolEntry[] => JSON.parse(row.tools) as McpToolEntry[];
