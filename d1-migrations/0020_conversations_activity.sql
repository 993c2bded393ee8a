-- The conversations list by last activity (GET /v1/conversations?order=activity): most recent
-- updated_at first, ties by id, paged by (updated_at, id) without a scan or a sort.
CREATE INDEX conversations_tenant_activity ON conversations(tenant_id, updated_at DESC, id DESC);
