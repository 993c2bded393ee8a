-- Key management: a key gets a label, the last four characters of its secret (for telling keys
-- apart in a listing; the secret itself is never stored) and an optional expiry. Keys made before
-- this migration have no last4. `revoked_at` (0001) is now written by the revoke routes.
ALTER TABLE api_keys ADD COLUMN name TEXT;
ALTER TABLE api_keys ADD COLUMN last4 TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
-- Listing a tenant's keys newest first pages by id within the tenant (this index covers the old one).
DROP INDEX api_keys_tenant;
CREATE INDEX api_keys_tenant_id ON api_keys(tenant_id, id DESC);
