-- Memory: the tenant's durable notes, the episodes (each fold's summary, dated), and the daily
-- memory map (the compact coverage stub the system prompt carries). Notes and episodes are
-- searchable through the cortex: kinds 'memory' and 'episode' of the tenant's cortex shard
-- (d1-migrations/cortex-shard/).

CREATE TABLE memory_notes (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  source_conversation_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX memory_notes_tenant ON memory_notes(tenant_id, id DESC);

-- fold_job_id makes recording an episode idempotent.
CREATE TABLE memory_episodes (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  conversation_id TEXT NOT NULL,
  fold_job_id TEXT NOT NULL UNIQUE,
  day TEXT NOT NULL,
  through_seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX memory_episodes_tenant ON memory_episodes(tenant_id, day);

-- Computed at most once per tenant per UTC day; the first writer wins, so every conversation of
-- the tenant carries byte-identical text all day.
CREATE TABLE memory_maps (
  tenant_id TEXT NOT NULL,
  day TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, day)
);
