-- Automation runs are retried by their queue, each delivery an attempt. `attempts` is the queue
-- delivery that last took the run: a redelivery after a crashed attempt (a higher number) takes it
-- over and runs it again, while a duplicate of the same delivery, or any delivery of a finished
-- run, does nothing. UNIQUE(automation_id, slot) still makes a slot one run.
-- status: queued, running, retrying (an attempt failed; `error` says why; the queue will deliver
-- it again), succeeded, skipped, failed (every attempt failed: recorded when the queue gives up).
ALTER TABLE automation_runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
