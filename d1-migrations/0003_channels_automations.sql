-- Channels (a named long-lived thread of a tenant mapped to its current conversation) and
-- scheduled automations with their runs. The ChannelDO is the writer of a channel's mapping;
-- this table is its listing.

CREATE TABLE channels (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  conversation_id TEXT,
  rotation_seconds INTEGER NOT NULL,
  last_activity_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE automations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  schedule TEXT NOT NULL,
  prompt TEXT NOT NULL,
  channel TEXT NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX automations_tenant ON automations(tenant_id, id DESC);
CREATE INDEX automations_active ON automations(paused, id);

-- One row per (automation, schedule slot): the unique key is what makes a slot run at most once,
-- however often the trigger fires.
CREATE TABLE automation_runs (
  id TEXT PRIMARY KEY,
  automation_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  slot TEXT NOT NULL,
  status TEXT NOT NULL,
  conversation_id TEXT,
  queued_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  usage TEXT,
  error TEXT,
  UNIQUE (automation_id, slot)
);
CREATE INDEX automation_runs_automation ON automation_runs(automation_id, id DESC);
CREATE INDEX automation_runs_open ON automation_runs(status, queued_at);
