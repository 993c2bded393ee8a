-- Idempotency keys of POST /v1/conversations: the tenant's key, a digest of the request it came
-- with, and the conversation it created. The primary key is the unique (tenant_id, key) that
-- decides between two concurrent creates with one key: the row goes in in one batch with the
-- conversation's listing row, so a create that loses it writes neither. A row older than 24 hours
-- counts as absent; the tenant's next keyed create removes it (by the created_at index), and a
-- row stays after its conversation is deleted, so a retry can be told so.
CREATE TABLE conversation_create_keys (
  tenant_id TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX conversation_create_keys_by_age ON conversation_create_keys (tenant_id, created_at);
