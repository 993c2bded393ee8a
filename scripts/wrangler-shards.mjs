// The cortex shards a wrangler.toml binds at its top level (scripts/stack.mjs migrates each locally).

/**
 * The cortex shards' databases (CORTEX_SHARD_n) bound at the top level of a wrangler.toml text, each
 * migrated from d1-migrations/cortex-shard/ as DB is from d1-migrations/.
 */
export function cortexShardDatabases(config) {
  const top = config.split(/^\[env\./m)[0];
  // Each [[d1_databases]] table whole, its keys in any order (a database_id pasted between binding
  // and database_name, as the README's deploy steps have one do, must not hide the shard).
  const tables = top
    .split(/^\[\[d1_databases\]\]\s*$/m)
    .slice(1)
    .map((t) => t.split(/^\[/m)[0]);
  const key = (table, name) => table.match(new RegExp(`^\\s*${name}\\s*=\\s*"([^"]+)"`, "m"))?.[1];
  return tables
    .filter((t) => /^CORTEX_SHARD_\d+$/.test(key(t, "binding") ?? ""))
    .map((t) => key(t, "database_name"))
    .filter(Boolean);
}
