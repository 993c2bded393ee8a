-- Tenant tools: tools a tenant registers for its model to call (an HTTP endpoint, or a client
-- tool its own application runs). Tenant-wide (project_id NULL) or seen only by one project's
-- conversations. A name is unique per tenant and scope; headers are sealed (secret-box), never
-- stored or returned in the clear.
CREATE TABLE tools (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  project_id TEXT,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  input_schema TEXT NOT NULL,
  endpoint TEXT,
  header_names TEXT NOT NULL DEFAULT '[]',
  sealed_headers TEXT,
  timeout_ms INTEGER NOT NULL,
  max_response_bytes INTEGER NOT NULL,
  idempotent INTEGER NOT NULL DEFAULT 0,
  retries INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX tools_name ON tools(tenant_id, COALESCE(project_id, ''), name);
CREATE INDEX tools_tenant ON tools(tenant_id, id DESC);
