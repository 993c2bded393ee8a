-- The single-database cortex (cortex_docs and its FTS5 index cortex_fts, from 0001) is gone: its
-- rows were moved into the shards on a 0.1.x release (`npm run migrate:cortex` to `done`), and
-- the index now lives in the D1 shards (d1-migrations/cortex-shard/). Dropping the table drops
-- its triggers; dropping the FTS5 table drops its shadow tables.
DROP TABLE IF EXISTS cortex_fts;
DROP TABLE IF EXISTS cortex_docs;
