-- Tenant-wide export jobs (POST /v1/exports), found by tenant and id; the export itself is one R2
-- object (tenants/{t}/exports/{id}/export.jsonl). `expires_at` is when the cron removes the job and
-- its object (EXPORT_RETENTION_DAYS after it finished, or after it was created while it has not);
-- the tenant's queued and running jobs are counted to bound how many run at once. `deleting`
-- marks a job whose object is being removed (a delete or the retention), seen by nobody.
CREATE TABLE export_jobs (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  status TEXT NOT NULL,
  format TEXT NOT NULL,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  expires_at TEXT NOT NULL,
  conversations INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0,
  error TEXT
);
CREATE INDEX export_jobs_by_tenant ON export_jobs (tenant_id, status);
CREATE INDEX export_jobs_by_expiry ON export_jobs (expires_at);
