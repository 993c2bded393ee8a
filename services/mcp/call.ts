// One call of a tenant's MCP tool: connect (the URL checked again), callTool through the SDK
// under the server's timeout, map the result. Every failure is an is_error result the model can
// read. A tools/list_changed heard during the call refreshes the cached list at once.
import { message, connectMcp, McpTimeout, OutboundRefused } from "./connect";
import { endpointOf, listWith } from "./listing";
import { mcpResultOutput, type McpResultOutput } from "./results";
import { getMcpServer, saveMcpListing } from "./servers";

export async function callMcpTool(env: Env, tenantId: string, serverId: string, mcpName: string, args: Record<string, unknown>): Promise<McpResultOutput & { listChanged?: boolean }> {
  const row = await getMcpServer(env.DB, tenantId, serverId);
  if (!row) return { content: "this MCP server is no longer registered", isError: true };
  let listChanged = false;
  let conn;
  try {
    conn = await connectMcp(env, await endpointOf(env, row), { timeoutMs: row.timeoutMs, onToolsChanged: () => (listChanged = true) });
  } catch (err) {
    return { content: `could not reach MCP server "${row.name}": ${message(err)}`, isError: true };
  }
  try {
    const result = await conn.client.callTool({ name: mcpName, arguments: args }, undefined, { timeout: row.timeoutMs });
    if (listChanged) {
      const { tools, truncated } = await listWith(conn.client, row.name, row.timeoutMs);
      await saveMcpListing(env.DB, tenantId, row.id, { transport: conn.transport, tools, listedAt: new Date().toISOString(), error: truncated ? "tool list truncated" : null });
    }
    return { ...mcpResultOutput(result), ...(listChanged ? { listChanged } : {}) };
  } catch (err) {
    const why = err instanceof McpTimeout || /timed? ?out/i.test(message(err)) ? `no answer within ${row.timeoutMs} ms` : err instanceof OutboundRefused ? message(err) : message(err);
    return { content: `MCP tool ${mcpName} on "${row.name}" failed: ${why}`, isError: true };
  } finally {
    await conn.close();
  }
}
