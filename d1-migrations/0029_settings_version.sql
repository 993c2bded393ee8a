-- How many times the settings new conversations start with have changed in this tenant: the
-- tenant's own or any of its projects'. Each is checked over the other before it is written, so a
-- write lands only while the number is still the one read before its check (and moves it on):
-- a change made meanwhile makes the other check again rather than leave a project that can start
-- no conversation.
ALTER TABLE tenants ADD COLUMN settings_version INTEGER NOT NULL DEFAULT 0;
