-- The cron tick (every 5 minutes) looks across all tenants for uploads never finished
-- (status 'uploading') and deletes cut short (status 'deleting', by age): an index by status, then
-- age, so each sweep reads only the rows in its state, not every attachment. Full, not partial:
-- the sweeps bind the status as a parameter, which a partial index's condition would not match.
CREATE INDEX attachments_status ON attachments(status, updated_at);
