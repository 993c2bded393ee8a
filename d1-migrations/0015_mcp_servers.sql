-- A tenant's remote MCP servers. A name is unique per tenant (it is part of every tool name the
-- model sees: mcp__<name>__<tool>). project_id set: only that project's conversations see it.
-- auth_sealed is the auth header sealed under TOOL_SECRETS_KEY (never returned); tools caches the
-- last tool listing (JSON), tools_listed_at when it was taken, tools_error why the last one failed.
CREATE TABLE mcp_servers (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  project_id TEXT,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  auth_sealed TEXT,
  transport TEXT,
  timeout_ms INTEGER NOT NULL DEFAULT 30000,
  tools TEXT NOT NULL DEFAULT '[]',
  tools_listed_at TEXT,
  tools_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, name)
);
CREATE INDEX mcp_servers_tenant ON mcp_servers (tenant_id, id);
