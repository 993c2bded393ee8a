-- A cortex shard (CORTEX_SHARD_n, services/cortex/shard.ts): one row per indexed document chunk
-- of the tenants the routing table (DB's cortex_shards) sends here, and its FTS5 index (BM25,
-- porter stemming). Every statement of services/cortex/search-index.ts filters by tenant_id.
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
CREATE INDEX cortex_docs_ref ON cortex_docs(tenant_id, kind, ref_id);
CREATE VIRTUAL TABLE cortex_fts USING fts5(body, content = 'cortex_docs', content_rowid = 'rowid', tokenize = 'porter unicode61');
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
