-- The cron tick (every 5 minutes) removes create keys past their 24 hours across all tenants (a tenant that stops
-- sending keyed creates never removes its own): an index by age alone, so the sweep reads only
-- the expired rows.
CREATE INDEX conversation_create_keys_by_created_at ON conversation_create_keys (created_at);
