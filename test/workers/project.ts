// The workers projects' shared configuration: tests that run inside workerd with the chat worker's
// real bindings (DO, D1, R2, Queues). Two projects use it (root vitest.config.ts):
// - "workers": one workerd per pool worker, reused from file to file (isolate: false), so the
//   worker's modules load once per pool worker and not once per file (the suite's largest cost
//   when every file had a workerd of its own). Storage is shared from file to file too, as a
//   deployment shares its D1 shards: these files make their own tenants and never depend on
//   what others wrote.
// - "workers-isolated": the files in ISOLATED (isolated.ts), each in a fresh workerd with empty storage,
//   because they check something shard-wide or deployment-wide that other files' rows would change.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineProject } from "vitest/config";
import { MAX_WORKERS } from "../parallelism";
import { ISOLATED } from "./isolated";

const root = new URL("../..", import.meta.url).pathname;

export const workersProject = (opts: { name: string; isolate: boolean }) =>
  defineProject(async () => ({
    plugins: [
      cloudflareTest({
        wrangler: { configPath: `${root}wrangler.toml` },
        miniflare: {
          bindings: {
            DEV_BOOTSTRAP: "true",
            // Suites fire thousands of requests with one key; rate-limits.test.ts sets its own limits.
            RATE_LIMIT_PER_MINUTE: "0",
            TURN_RATE_LIMIT_PER_MINUTE: "0",
            TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
            // Failed automation attempts come back at once, so the queue's retries and its
            // dead-letter queue act within a test's time.
            AUTOMATION_RETRY_DELAY_SECONDS: "0",
            // The MCP servers of test/mcp-servers and the HTTP tool server (http-tool-server.mjs) listen
            // on 127.0.0.1; deployed, loopback stays refused.
            ALLOW_LOOPBACK_TOOLS: "true",
            // A fixed test key for sealed tool secrets (services/tools/secret-box.ts), never a deployment's.
            TOOL_SECRETS_KEY: "dGVzdC1vbmx5LXRvb2wtc2VjcmV0cy1rZXktMzJieXQ=",
            // Two due automations per cron invocation: every tick with more goes through the
            // queue's claim continuations, so the automation tests exercise paging too.
            AUTOMATION_CLAIM_PAGE: "2",
            TEST_MIGRATIONS: await readD1Migrations(`${root}d1-migrations`),
            // Applied to every cortex shard (CORTEX_SHARD_0..N, wrangler.toml).
            TEST_CORTEX_MIGRATIONS: await readD1Migrations(`${root}d1-migrations/cortex-shard`),
          },
        },
      }),
    ],
    test: {
      name: opts.name,
      root,
      include: opts.isolate ? ISOLATED : ["test/workers/**/*.test.ts"],
      exclude: opts.isolate ? [] : ISOLATED,
      isolate: opts.isolate,
      maxWorkers: MAX_WORKERS,
      setupFiles: ["test/workers/apply-migrations.ts"],
      globalSetup: ["test/mcp-servers/global-setup.ts", "test/workers/http-tool-server.mjs"],
      testTimeout: 30_000,
    },
  }));
