import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Idempotent: applyD1Migrations records what it applied and skips it the next time.
await applyD1Migrations(
  env.DB,
  (env as unknown as { TEST_MIGRATIONS: import("cloudflare:test").D1Migration[] }).TEST_MIGRATIONS,
);
