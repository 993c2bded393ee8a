-- The cortex moves out of D1 into one SQLite Durable Object per shard (CortexDO). This is its
-- routing table: a tenant with a row here lives in that shard; a tenant without one lives in its
-- own default shard (services/cortex/routing.ts). cortex_docs and cortex_fts stay, read only by
-- the move of old rows (POST /v1/admin/cortex/migrate), until a later migration drops them.
CREATE TABLE cortex_shards (
  tenant_id TEXT PRIMARY KEY,
  shard TEXT NOT NULL,
  assigned_at TEXT NOT NULL
);
