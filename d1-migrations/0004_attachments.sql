-- Attachments: the bytes live in R2 (r2_key); this row holds what the reference note says about
-- them (facts: page count, line count, dimensions, sheets) and the state of an upload.
CREATE TABLE attachments (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  conversation_id TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  size INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  r2_key TEXT NOT NULL,
  upload_id TEXT,
  facts TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX attachments_conversation ON attachments(tenant_id, conversation_id, id);
