-- Where an automation's channel objects should live when a run has to create them: the region of
-- the request that created the automation (core/location-hint.ts), since a cron run has no caller
-- of its own and its output is read by whoever set it up. NULL: no hint (Cloudflare picks).
ALTER TABLE automations ADD COLUMN location_hint TEXT;
