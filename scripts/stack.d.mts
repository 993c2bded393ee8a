// Types of scripts/stack.mjs for the test that imports it.

/** The cortex shards' database names bound at the top level of a wrangler.toml text (the project's by default). */
export declare function cortexShardDatabases(config?: string): string[];
