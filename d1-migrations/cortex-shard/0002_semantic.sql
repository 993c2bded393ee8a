-- The semantic path (services/semantic): which documents have a vector, tombstones of vectors
-- whose document went (so Vectorize, deployed, forgets them), and the local path's vectors. A
-- derived view of cortex_docs, written after each indexing run by the conversation's outbox and
-- caught up at search time for the rest (services/semantic/catch-up.ts); the triggers keep it honest.
CREATE TABLE cortex_embedded (
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
END;
