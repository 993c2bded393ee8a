// Types of scripts/wrangler-shards.mjs for the test that imports it.

/** The cortex shards' database names bound at the top level of a wrangler.toml text. */
export declare function cortexShardDatabases(config: string): string[];
