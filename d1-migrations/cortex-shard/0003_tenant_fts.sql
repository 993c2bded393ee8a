-- Each tenant's rows of a shard get one range of rowids (cortex_tenant_ranges: base to base +
-- 2^32 - 1, in order of arrival), so the search's FTS5 scans are limited to the tenant's rows with
-- a rowid range (services/cortex/search-index.ts): FTS5 seeks to the range in each word's doclist
-- and scores only the tenant's rows, not every tenant's in the shard. The index itself is unchanged
-- (same column, same tokens), so bm25 and the ranking are exactly what they were; `d.tenant_id = ?`
-- stays the filter that guarantees the tenant. Any writer's INSERT lands in the range: the insert
-- trigger gives a new tenant the next range and moves a row that arrived outside its tenant's range
-- to the range's end before indexing it.
CREATE TABLE cortex_tenant_ranges (
  tenant_id TEXT PRIMARY KEY,
  base INTEGER NOT NULL UNIQUE
);
-- Existing rows: each tenant a range, its rows renumbered into it in their order, then the index
-- rebuilt for the new rowids (old rowids are below 2^32, the first range's base, so none collide).
-- One statement each; the renumbering and the rebuild are the long ones. Measured in node:sqlite
-- (node scripts/bench/cortex-migration-0003.mjs; docs/measurements.md, "Migration 0003 on an
-- existing shard"), on a 2-core machine under load: the whole file took 3.0 s on a shard of
-- 20,000 messages and 27.8 s on one of 100,000. So one go is safe up to about 50,000 rows against
-- the 30 s D1 allows a query. A larger shard: move tenants out to another shard first
-- (services/cortex/move.ts), or run the statements by hand with the renumbering narrowed to a few
-- tenants per query (`AND d.tenant_id IN (...)` in its inner SELECT, once the ranges exist), the
-- two triggers created, and the rebuild replaced by `INSERT INTO cortex_fts(cortex_fts)
-- VALUES ('delete-all')` and then `INSERT INTO cortex_fts(rowid, body) SELECT rowid, body FROM
-- cortex_docs WHERE rowid BETWEEN ? AND ?`, one tenant range per query; then record the
-- migration as applied in d1_migrations. Until then that shard's searches miss unindexed rows.
INSERT INTO cortex_tenant_ranges (tenant_id, base)
  SELECT tenant_id, row_number() OVER (ORDER BY tenant_id) * 4294967296 FROM (SELECT DISTINCT tenant_id FROM cortex_docs);
UPDATE cortex_docs SET rowid = placed.rowid
  FROM (SELECT d.rowid AS was, r.base + row_number() OVER (PARTITION BY d.tenant_id ORDER BY d.rowid) AS rowid
        FROM cortex_docs d JOIN cortex_tenant_ranges r ON r.tenant_id = d.tenant_id) AS placed
  WHERE cortex_docs.rowid = placed.was;
DROP TRIGGER cortex_docs_ai;
CREATE TRIGGER cortex_docs_ai AFTER INSERT ON cortex_docs
  WHEN EXISTS (SELECT 1 FROM cortex_tenant_ranges r WHERE r.tenant_id = new.tenant_id AND new.rowid BETWEEN r.base AND r.base + 4294967295)
BEGIN
  INSERT INTO cortex_fts(rowid, body) VALUES (new.rowid, new.body);
END;
-- A row written without its range's rowid (by a writer other than the cortex's upserts): its
-- tenant gets a range if new, the row moves to the range's end, and is indexed there.
CREATE TRIGGER cortex_docs_place AFTER INSERT ON cortex_docs
  WHEN NOT EXISTS (SELECT 1 FROM cortex_tenant_ranges r WHERE r.tenant_id = new.tenant_id AND new.rowid BETWEEN r.base AND r.base + 4294967295)
BEGIN
  INSERT OR IGNORE INTO cortex_tenant_ranges (tenant_id, base)
    SELECT new.tenant_id, coalesce(max(base), 0) + 4294967296 FROM cortex_tenant_ranges;
  UPDATE cortex_docs SET rowid = (
      SELECT coalesce((SELECT max(d.rowid) FROM cortex_docs d WHERE d.rowid BETWEEN r.base AND r.base + 4294967295), r.base) + 1
      FROM cortex_tenant_ranges r WHERE r.tenant_id = new.tenant_id)
    WHERE rowid = new.rowid;
  INSERT INTO cortex_fts(rowid, body) SELECT rowid, body FROM cortex_docs WHERE doc_id = new.doc_id;
END;
INSERT INTO cortex_fts(cortex_fts) VALUES ('rebuild');
