// The mcp_servers table: a tenant's registered MCP servers and each one's cached tool list. Every
// query is scoped to the tenant, so another tenant's id reads as a missing row.
import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { mcpServers } from "../../db/schema";
import { sortableId } from "../../core/ids";
import { mcpToolName } from "../../core/mcp-names";
import { isUniqueViolation } from "../d1-batch";

export type McpServerRow = typeof mcpServers.$inferSelect;

/** One tool of a server as cached: the name the model sees, the server's own name, its schema. */
export interface McpToolEntry {
  name: string;
  mcpName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface McpListing {
  /** null when the listing failed (no connection): the last good list is kept. */
  transport: string | null;
  tools: McpToolEntry[];
  listedAt: string;
  error: string | null;
}

export class McpNameTaken extends Error {}

export async function createMcpServer(
  db: D1Database,
  row: Omit<McpServerRow, "createdAt" | "updatedAt" | "tools" | "toolsListedAt" | "toolsError" | "transport">,
): Promise<McpServerRow> {
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
  try {
    await drizzle(db).insert(mcpServers).values(full);
  } catch (err) {
    if (isUniqueViolation(err)) throw new McpNameTaken();
    throw err;
  }
  return full;
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

/** The servers a conversation sees: the tenant-wide ones and its project's. */
export async function mcpServersInScope(
  db: D1Database,
  tenantId: string,
  projectId: string | null,
): Promise<McpServerRow[]> {
  const scope = projectId
    ? or(isNull(mcpServers.projectId), eq(mcpServers.projectId, projectId))
    : isNull(mcpServers.projectId);
  return drizzle(db)
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), scope))
    .orderBy(mcpServers.name);
}

export async function updateMcpServer(
  db: D1Database,
  {
    tenantId,
    id,
    change,
  }: {
    tenantId: string;
    id: string;
    change: Partial<Pick<McpServerRow, "name" | "url" | "authSealed" | "projectId" | "timeoutMs">>;
  },
): Promise<McpServerRow | null> {
  try {
    const rows = await drizzle(db)
      .update(mcpServers)
      .set({ ...change, updatedAt: new Date().toISOString() })
      .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.id, id)))
      .returning();
    return rows[0] ?? null;
  } catch (err) {
    if (isUniqueViolation(err)) throw new McpNameTaken();
    throw err;
  }
}

export async function saveMcpListing(
  db: D1Database,
  { tenantId, id, listing }: { tenantId: string; id: string; listing: McpListing },
): Promise<McpServerRow | null> {
  // A failed listing keeps the last good tool list: a server that is down for a moment does not
  // take its tools away; the error says why the list may be stale.
  const failed = listing.error !== null && listing.transport === null;
  const set = failed
    ? { toolsListedAt: listing.listedAt, toolsError: listing.error, ...(await keptUnderCurrentName(db, tenantId, id)) }
    : {
        transport: listing.transport,
        tools: JSON.stringify(listing.tools),
        toolsListedAt: listing.listedAt,
        toolsError: listing.error,
      };
  const rows = await drizzle(db)
    .update(mcpServers)
    .set(set)
    .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.id, id)))
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
export async function deleteProjectMcpServers(db: D1Database, tenantId: string, projectId: string): Promise<void> {
  await drizzle(db)
    .delete(mcpServers)
    .where(and(eq(mcpServers.tenantId, tenantId), eq(mcpServers.projectId, projectId)));
}

export const cachedTools = (row: McpServerRow): McpToolEntry[] => JSON.parse(row.tools) as McpToolEntry[];
