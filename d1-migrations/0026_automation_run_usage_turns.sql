-- The turn keys (the n of automation-run:<run>:<n>) whose usage automation_runs.usage counts, as a
-- JSON array, written in the same update as usage: an attempt adds a turn it passes over (an
-- earlier attempt's that failed) only when its key is not in it, so each turn of the run is
-- counted once whether the attempt that ran it recorded it or died first. Meaningful only beside
-- a usage; NULL beside a usage: a run counted before this column (its attempts' own turns only).
ALTER TABLE automation_runs ADD COLUMN usage_turns TEXT;
