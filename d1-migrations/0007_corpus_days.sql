-- Days with corpus-log events still stored one object per event; the cron trigger rolls each
-- closed day into its single log object (r2-layout: brain/corpus/YYYY-MM-DD.log.md).
CREATE TABLE corpus_days (
  tenant_id TEXT NOT NULL,
  day TEXT NOT NULL,
  PRIMARY KEY (tenant_id, day)
);
