-- An automation run's prompt, stored by the first attempt that goes on to run it: every attempt
-- sends that same prompt, so a redelivery after the automation's prompt was edited replays the
-- run's turn keys instead of running the new prompt as a second turn of the slot. NULL until then.
ALTER TABLE automation_runs ADD COLUMN prompt TEXT;
-- The highest turn key number (automation-run:<run>:<n>) an attempt of the run sent a turn under:
-- keys up to it may only replay, a key past it starts a turn (which takes the tenant's turn token).
ALTER TABLE automation_runs ADD COLUMN turn_keys_sent INTEGER NOT NULL DEFAULT 0;
-- The expiry of the key that created the automation or last changed its prompt or schedule (NULL:
-- that key never expires): past it the cron tick claims no run, so a short-lived key's automation
-- does not outlive it.
ALTER TABLE automations ADD COLUMN expires_at TEXT;
