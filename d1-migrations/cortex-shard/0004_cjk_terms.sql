-- Chinese and Japanese are written without spaces, and unicode61 makes a whole run of Han, kana (or
-- Hangul) one token: "東京タワー" inside "私は東京タワーに行きました" was never found. Each row now
-- also carries `terms`, the overlapping character bigrams of each such run of its body, space
-- separated (a run of one character is itself; services/cortex/search-index.ts cjkTerms writes it,
-- null when the body has no run), and the index holds the body and those terms:
-- `body || coalesce(char(10) || terms, '')`. A query word holding such a run also looks for the
-- phrase of its bigrams, which matches the same consecutive bigrams in any row indexed so.
--
-- The 'delete' of an external-content FTS5 table must be given exactly what was indexed, or the
-- index is corrupt: every trigger deletes with the same expression of old.* as it inserted with
-- new.*. Rows indexed before this migration have terms NULL, so the expression is their body alone,
-- which is what they were indexed with: the invariant holds for them unchanged. They are not
-- re-indexed: a word inside a run is found in text indexed from this migration on (a row whose
-- body changes is written again, with its terms). Because the index holds more than the content
-- table's `body`, FTS5's 'rebuild' and 'integrity-check' (which read `body` alone) no longer apply
-- to a shard with such rows: re-index with 'delete-all' and then
-- `INSERT INTO cortex_fts(rowid, body) SELECT rowid, body || coalesce(char(10) || terms, '') FROM cortex_docs`.
-- snippet() reads `body` from cortex_docs, so the terms are never shown.
ALTER TABLE cortex_docs ADD COLUMN terms TEXT;
DROP TRIGGER cortex_docs_ai;
CREATE TRIGGER cortex_docs_ai AFTER INSERT ON cortex_docs
  WHEN EXISTS (SELECT 1 FROM cortex_tenant_ranges r WHERE r.tenant_id = new.tenant_id AND new.rowid BETWEEN r.base AND r.base + 4294967295)
BEGIN
  INSERT INTO cortex_fts(rowid, body) VALUES (new.rowid, new.body || coalesce(char(10) || new.terms, ''));
END;
DROP TRIGGER cortex_docs_place;
CREATE TRIGGER cortex_docs_place AFTER INSERT ON cortex_docs
  WHEN NOT EXISTS (SELECT 1 FROM cortex_tenant_ranges r WHERE r.tenant_id = new.tenant_id AND new.rowid BETWEEN r.base AND r.base + 4294967295)
BEGIN
  INSERT OR IGNORE INTO cortex_tenant_ranges (tenant_id, base)
    SELECT new.tenant_id, coalesce(max(base), 0) + 4294967296 FROM cortex_tenant_ranges;
  UPDATE cortex_docs SET rowid = (
      SELECT coalesce((SELECT max(d.rowid) FROM cortex_docs d WHERE d.rowid BETWEEN r.base AND r.base + 4294967295), r.base) + 1
      FROM cortex_tenant_ranges r WHERE r.tenant_id = new.tenant_id)
    WHERE rowid = new.rowid;
  INSERT INTO cortex_fts(rowid, body) SELECT rowid, body || coalesce(char(10) || terms, '') FROM cortex_docs WHERE doc_id = new.doc_id;
END;
DROP TRIGGER cortex_docs_ad;
CREATE TRIGGER cortex_docs_ad AFTER DELETE ON cortex_docs BEGIN
  INSERT INTO cortex_fts(cortex_fts, rowid, body) VALUES ('delete', old.rowid, old.body || coalesce(char(10) || old.terms, ''));
END;
-- The terms follow the body (the upsert writes both), but an update of either re-indexes the row.
-- The semantic path's trigger (0002, on body) stays: a vector is of the body, not of its terms.
DROP TRIGGER cortex_docs_au;
CREATE TRIGGER cortex_docs_au AFTER UPDATE OF body, terms ON cortex_docs BEGIN
  INSERT INTO cortex_fts(cortex_fts, rowid, body) VALUES ('delete', old.rowid, old.body || coalesce(char(10) || old.terms, ''));
  INSERT INTO cortex_fts(rowid, body) VALUES (new.rowid, new.body || coalesce(char(10) || new.terms, ''));
END;
