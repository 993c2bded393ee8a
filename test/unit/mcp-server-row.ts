// An MCP server's D1 row as the MCP services read it, for unit tests that stand in for the store.
import type { McpServerRow } from "../../services/mcp/servers";

export const mcpServerRow = (over: Partial<McpServerRow>): McpServerRow => ({
  id: "mcp_x",
  tenantId: "t",
  projectId: null,
  name: "fx",
  url: "https://mcp.example.com/mcp",
  authSealed: null,
  transport: "streamable-http",
  timeoutMs: 5000,
  tools: "[]",
  toolsListedAt: null,
  toolsError: null,
  createdAt: "",
  updatedAt: "",
  ...over,
});
