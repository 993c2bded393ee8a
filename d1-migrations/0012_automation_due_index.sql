-- The cron tick reads only the automations that are due, through an index, a page at a time,
-- instead of walking every automation of every tenant. next_run_at is the first slot after the
-- last tick that saw the row ('' = due at the next tick: new, resumed or rescheduled rows, and
-- every row that exists when this migration runs).
ALTER TABLE automations ADD COLUMN next_run_at TEXT NOT NULL DEFAULT '';
DROP INDEX automations_active;
CREATE INDEX automations_due ON automations(paused, next_run_at);
