-- A PDF's pages are extracted into the cortex (kind 'page') on its first pdf_search, in chunks
-- through the job queue. index_status: none -> indexing -> indexed.
ALTER TABLE attachments ADD COLUMN index_status TEXT NOT NULL DEFAULT 'none';
ALTER TABLE attachments ADD COLUMN index_started_at TEXT;
