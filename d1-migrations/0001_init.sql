-- Tenants, hashed API keys, the conversations list, websocket tickets and the cortex index.

CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

-- Keys are stored as SHA-256 hex digests; the plaintext is shown once, at creation.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  key_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

-- The listing of a tenant's conversations. The conversation itself lives in its Durable Object
-- and in R2; this row is a denormalized index kept current after each turn.
CREATE TABLE conversations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  title TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_tenant_created ON conversations(tenant_id, id DESC);

-- Single-use, short-lived websocket tickets for browsers (stored hashed).
CREATE TABLE ws_tickets (
  ticket_hash TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX ws_tickets_expiry ON ws_tickets(expires_at);

-- The cortex: one row per indexed document chunk (a message, later memory entries and
-- attachment pages), searched through the FTS5 table below. doc_id makes indexing idempotent.
CREATE TABLE cortex_docs (
  rowid INTEGER PRIMARY KEY,
  doc_id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  conversation_id TEXT,
  kind TEXT NOT NULL,
  ref_id TEXT NOT NULL,
  seq INTEGER,
  role TEXT,
  created_at TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX cortex_docs_tenant ON cortex_docs(tenant_id, conversation_id);

CREATE VIRTUAL TABLE cortex_fts USING fts5(
  body,
  content = 'cortex_docs',
  content_rowid = 'rowid',
  tokenize = 'porter unicode61'
);

CREATE TRIGGER cortex_docs_ai AFTER INSERT ON cortex_docs BEGIN
  INSERT INTO cortex_fts(rowid, body) VALUES (new.rowid, new.body);
END;
CREATE TRIGGER cortex_docs_ad AFTER DELETE ON cortex_docs BEGIN
  INSERT INTO cortex_fts(cortex_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
END;
CREATE TRIGGER cortex_docs_au AFTER UPDATE OF body ON cortex_docs BEGIN
  INSERT INTO cortex_fts(cortex_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
  INSERT INTO cortex_fts(rowid, body) VALUES (new.rowid, new.body);
END;
