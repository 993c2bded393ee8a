-- What the model calls cost: one row per turn (or each resumed part of a paused turn) and per
-- fold, written once (the id is the turn's part or the fold job: a retried write is a no-op), with
-- the tokens by kind and the cost at the catalog's prices. GET /v1/usage sums them by day range.
CREATE TABLE usage_events (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  day TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  thinking_tokens INTEGER NOT NULL,
  web_search_requests INTEGER NOT NULL,
  web_fetch_requests INTEGER NOT NULL,
  cost_micro_usd INTEGER,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX usage_events_by_day ON usage_events (tenant_id, day, conversation_id);
