// The local stack migrates every cortex shard the config binds (scripts/stack.mjs, by scripts/wrangler-shards.mjs). A shard's
// [[d1_databases]] table may hold its keys in any order: the README's deploy steps have one paste
// a database_id into it, which must not hide the shard from the local migrations.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cortexShardDatabases } from "../../scripts/wrangler-shards.mjs";

const table = (lines: string[]) => `[[d1_databases]]\n${lines.join("\n")}\n`;

describe("the local stack's cortex shards", () => {
  it("are every CORTEX_SHARD_n table of the top level, whatever the order of its keys", () => {
    const config = [
      table(['binding = "DB"', 'database_name = "context-chat"']),
      table(['binding = "CORTEX_SHARD_0"', 'database_id = "0f1e"', 'database_name = "context-chat-cortex-0"']),
      table([
        'database_name = "context-chat-cortex-1"',
        'migrations_dir = "d1-migrations/cortex-shard"',
        'binding = "CORTEX_SHARD_1"',
      ]),
      '[vars]\nDEFAULT_MODEL = "m"\n',
      '[env.production]\n[[env.production.d1_databases]]\nbinding = "CORTEX_SHARD_7"\ndatabase_name = "elsewhere"\n',
    ].join("\n");
    expect(cortexShardDatabases(config)).toEqual(["context-chat-cortex-0", "context-chat-cortex-1"]);
  });

  it("are the shards the project's wrangler.toml binds", () => {
    const config = readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8");
    const bound = [...config.split(/^\[env\./m)[0].matchAll(/binding = "(CORTEX_SHARD_\d+)"/g)].length;
    expect(bound).toBeGreaterThan(0);
    expect(cortexShardDatabases(config)).toHaveLength(bound);
  });
});
