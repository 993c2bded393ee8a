-- How many times any of the tenant's projects' settings have changed. A project's settings write
-- is made only while the tenant's settings_version is the one read before its check, and moves
-- this one on, never settings_version: so writes to different projects never refuse each other,
-- while the tenant's settings write (checked over every project's) is made only while both are the
-- ones read before its check, and a project's written meanwhile makes it check again.
ALTER TABLE tenants ADD COLUMN project_settings_version INTEGER NOT NULL DEFAULT 0;
