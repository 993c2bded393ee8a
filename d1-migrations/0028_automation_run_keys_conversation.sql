-- The conversation an automation run's turn keys went to: a key is known only to the conversation
-- that received it, so a retry after the channel moved (deleted, rotated, or the automation's
-- channel changed) takes those keys' outcomes there, and a turn on the channel's new conversation
-- is a new key's (one tenant turn token; none while the automation is paused). NULL: no key sent
-- yet, or sent before this column (then the channel's current conversation is taken for it).
ALTER TABLE automation_runs ADD COLUMN turn_keys_conversation_id TEXT;
-- The first key sent to that conversation: keys below it went to an earlier one, their turns
-- failed or gone with it, and are never sent again.
ALTER TABLE automation_runs ADD COLUMN turn_keys_from INTEGER NOT NULL DEFAULT 1;
