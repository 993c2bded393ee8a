// The cortex's schema inside a shard's own SQLite (CortexDO), versioned: each entry runs once, in
// order, and the applied version is recorded in the same transaction. The tables are those the
// D1 cortex had (0001_init.sql), so services/cortex/search-index.ts's SQL runs unchanged; a later index (a
// vector table beside the FTS5 one) is a new entry appended here, never an edit of an old one.
export const CORTEX_SCHEMA: readonly string[] = [
  `CREATE TABLE cortex_docs (
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
   END;`,
  // 2. The semantic path (services/semantic): which documents have a vector, tombstones of vectors
  // whose document went (so Vectorize, deployed, forgets them), and the local path's vectors. A
  // derived view of cortex_docs, caught up at search time; the triggers keep it honest.
  `CREATE TABLE cortex_embedded (
     doc_id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL,
     vec_id TEXT NOT NULL
   );
   CREATE INDEX cortex_embedded_vec ON cortex_embedded(tenant_id, vec_id);

   CREATE TABLE cortex_vectors_gone (
     tenant_id TEXT NOT NULL,
     vec_id TEXT NOT NULL,
     PRIMARY KEY (tenant_id, vec_id)
   );

   CREATE TABLE local_vectors (
     tenant_id TEXT NOT NULL,
     vec_id TEXT NOT NULL,
     vector BLOB NOT NULL,
     PRIMARY KEY (tenant_id, vec_id)
   );

   CREATE TRIGGER cortex_embedded_doc_deleted AFTER DELETE ON cortex_docs BEGIN
     INSERT OR IGNORE INTO cortex_vectors_gone (tenant_id, vec_id) SELECT tenant_id, vec_id FROM cortex_embedded WHERE doc_id = old.doc_id;
     DELETE FROM cortex_embedded WHERE doc_id = old.doc_id;
   END;

   CREATE TRIGGER cortex_embedded_doc_changed AFTER UPDATE OF body ON cortex_docs BEGIN
     DELETE FROM cortex_embedded WHERE doc_id = old.doc_id;
   END;`,
];

/** Brings a shard's storage to the latest schema version; a no-op once there. */
export function ensureCortexSchema(storage: DurableObjectStorage): number {
  const sql = storage.sql;
  sql.exec(`CREATE TABLE IF NOT EXISTS cortex_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  const row = sql.exec<{ value: string }>(`SELECT value FROM cortex_meta WHERE key = 'schema_version'`).toArray()[0];
  let version = row ? Number(row.value) : 0;
  while (version < CORTEX_SCHEMA.length) {
    const step = CORTEX_SCHEMA[version];
    const next = version + 1;
    storage.transactionSync(() => {
      sql.exec(step);
      sql.exec(`INSERT OR REPLACE INTO cortex_meta (key, value) VALUES ('schema_version', ?)`, String(next));
    });
    version = next;
  }
  return version;
}
