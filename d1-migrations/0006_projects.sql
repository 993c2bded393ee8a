-- Projects: files shared by several conversations. A project file is an attachment with a
-- project_id and no conversation; conversations of the project see its file list (names and
-- facts only) in their prompt and read the files with the attachment tools.
CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX projects_tenant ON projects(tenant_id, id DESC);
ALTER TABLE attachments ADD COLUMN project_id TEXT;
CREATE INDEX attachments_project ON attachments(tenant_id, project_id, id);
