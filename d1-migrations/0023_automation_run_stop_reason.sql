-- The stop_reason of the turn whose outcome an automation run recorded (end_turn, interrupted,
-- refusal, …), so the run history tells a reply from a turn the user stopped or the model refused.
-- NULL: no turn ended for the run (queued, skipped, a failure before any turn).
ALTER TABLE automation_runs ADD COLUMN stop_reason TEXT;
