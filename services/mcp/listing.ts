// Listing a server's tools through the SDK and caching the list in D1 (registration, refresh, and
// a tools/list_changed heard during a call). Names are mapped once here (core/mcp-names.ts) and
// the mapping is stored with each tool, so a call always reaches the tool it was listed as.
import { mcpToolName } from "../../core/mcp-names";
import { open } from "../tools/secret-box";
import { connectMcp, message, withTimeout, type McpConnection, type McpEndpoint } from "./connect";
import { saveMcpListing, type McpListing, type McpServerRow, type McpToolEntry } from "./servers";

/** A server may offer many tools; past this the rest are left out (and the error says so). */
export const MAX_TOOLS_PER_SERVER = 500;
const MAX_DESCRIPTION = 1_000;

export const authOwner = (row: Pick<McpServerRow, "tenantId" | "id">) => `${row.tenantId}:${row.id}:mcp-auth`;

export async function endpointOf(env: Env, row: McpServerRow): Promise<McpEndpoint> {
  return {
    url: row.url,
    auth: row.authSealed
      ? (JSON.parse(await open(env, authOwner(row), row.authSealed)) as { name: string; value: string })
      : null,
  };
}

export async function listWith(
  conn: McpConnection,
  server: string,
  timeoutMs: number,
): Promise<{ tools: McpToolEntry[]; truncated: boolean }> {
  const tools: McpToolEntry[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await withTimeout(
      conn.guard(conn.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs })),
      timeoutMs,
      "listing tools",
    );
    for (const t of page.tools) {
      const name = await mcpToolName(server, t.name);
      if (seen.has(name)) continue;
      seen.add(name);
      tools.push({
        name,
        mcpName: t.name,
        description: (t.description ?? t.title ?? t.name).slice(0, MAX_DESCRIPTION),
        inputSchema: t.inputSchema as Record<string, unknown>,
      });
      if (tools.length >= MAX_TOOLS_PER_SERVER) return { tools, truncated: true };
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { tools, truncated: false };
}

/** Connects, lists and stores the result (or the error, keeping the last good list). */
export async function refreshListing(env: Env, row: McpServerRow): Promise<McpServerRow> {
  const listedAt = new Date().toISOString();
  let listing: McpListing;
  try {
    const conn = await connectMcp(env, await endpointOf(env, row), { timeoutMs: row.timeoutMs });
    try {
      const { tools, truncated } = await listWith(conn, row.name, row.timeoutMs);
      listing = {
        transport: conn.transport,
        tools,
        listedAt,
        error: truncated ? `only the first ${MAX_TOOLS_PER_SERVER} tools are listed` : null,
      };
    } finally {
      await conn.close();
    }
  } catch (err) {
    listing = { transport: null, tools: [], listedAt, error: message(err) };
  }
  return (await saveMcpListing(env.DB, { tenantId: row.tenantId, id: row.id, listing })) ?? row;
}
