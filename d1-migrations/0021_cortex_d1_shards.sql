-- The cortex moves from one SQLite Durable Object per tenant (CortexDO) into sharded D1 databases
-- (CORTEX_SHARD_0..N, migrated from d1-migrations/cortex-shard/). The routing table now names a
-- tenant's D1 shard (`shard`, its binding; NULL until the tenant's first use assigns the least
-- full one), a move between shards in progress (`moving_to`, then `draining_from` while the old
-- copy is removed, services/cortex/move.ts), and the Durable Object the tenant's rows were in
-- before (`object_shard`, read by the move into D1; NULL: the tenant's default object).
CREATE TABLE cortex_routes (
  tenant_id TEXT PRIMARY KEY,
  shard TEXT,
  moving_to TEXT,
  draining_from TEXT,
  object_shard TEXT,
  assigned_at TEXT NOT NULL
);
INSERT INTO cortex_routes (tenant_id, shard, object_shard, assigned_at)
  SELECT tenant_id, NULL, shard, assigned_at FROM cortex_shards;
DROP TABLE cortex_shards;
ALTER TABLE cortex_routes RENAME TO cortex_shards;
CREATE INDEX cortex_shards_shard ON cortex_shards(shard);
