-- Settings a tenant or a project gives every conversation it starts (a JSON settings patch, the
-- same keys as a conversation's settings): the model, effort, thinking, server tools... A new
-- conversation's settings are the model's defaults, then the tenant's, then its project's, then
-- what the request names.
ALTER TABLE tenants ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE projects ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
