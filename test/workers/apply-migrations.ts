import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { shardDatabase, shardNames } from "../../services/cortex/routing";

type Migrations = import("cloudflare:test").D1Migration[];
const given = env as unknown as { TEST_MIGRATIONS: Migrations; TEST_CORTEX_MIGRATIONS: Migrations };

// Idempotent: applyD1Migrations records what it applied and skips it the next time.
await applyD1Migrations(env.DB, given.TEST_MIGRATIONS);
// Every cortex shard gets the shard schema, as scripts/stack.mjs applies it to each locally.
for (const name of shardNames(env)) await applyD1Migrations(shardDatabase(env, name), given.TEST_CORTEX_MIGRATIONS);
