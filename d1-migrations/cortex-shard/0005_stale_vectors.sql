-- A document whose body changes keeps its vector mark, marked stale ('stale:' || vec_id), instead
-- of losing it: the old vector stays in the index (under the same id) until a catch-up re-embeds
-- the new body, and if the document is deleted before that, the delete must still tombstone it.
-- Under 0002's triggers the change dropped the mark, so a note edited and then deleted before any
-- search left its old vector in the index for good. A catch-up (services/semantic/catch-up.ts)
-- embeds stale rows as it does unmarked ones and takes their row over with its claim.
--
-- A claim still goes on a change, as before: the catch-up holding it no longer finds it, so it does
-- not mark the new body embedded with the old body's vector, and it deletes the vector it just
-- wrote for a document left with no row. A document deleted while claimed leaves the tombstone
-- 'doc:' || doc_id: the vector it may have (a stale row's that the claim took over, or one a
-- catch-up wrote before it died) is not named in the row, so forgetGone deletes the document's
-- vector id. A document without a row leaves no tombstone, as before (a tenant's move drops the
-- rows first, so the old shard's deletes never remove the vectors the new shard's documents share).
DROP TRIGGER cortex_embedded_doc_changed;
CREATE TRIGGER cortex_embedded_doc_changed AFTER UPDATE OF body ON cortex_docs BEGIN
  DELETE FROM cortex_embedded WHERE doc_id = old.doc_id AND vec_id LIKE 'claim:%';
  UPDATE cortex_embedded SET vec_id = 'stale:' || vec_id WHERE doc_id = old.doc_id AND vec_id NOT LIKE 'stale:%';
END;

DROP TRIGGER cortex_embedded_doc_deleted;
CREATE TRIGGER cortex_embedded_doc_deleted AFTER DELETE ON cortex_docs BEGIN
  INSERT OR IGNORE INTO cortex_vectors_gone (tenant_id, vec_id)
    SELECT tenant_id, CASE
        WHEN vec_id LIKE 'claim:%' THEN 'doc:' || doc_id
        WHEN vec_id LIKE 'stale:%' THEN substr(vec_id, 7)
        ELSE vec_id
      END
    FROM cortex_embedded WHERE doc_id = old.doc_id;
  DELETE FROM cortex_embedded WHERE doc_id = old.doc_id;
END;
