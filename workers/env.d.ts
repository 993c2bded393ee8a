// Secrets and local-only switches that wrangler.toml does not declare (wrangler types only sees
// [vars] and bindings). Optional to the type; which model answers is core/model-provider.ts's call.
interface __BaseEnv_Env {
  /** The Anthropic API key (a secret). Required outside local dev unless MODEL_PROVIDER=offline. */
  ANTHROPIC_API_KEY?: string;
  /**
   * Where the SDK sends model calls instead of https://api.anthropic.com, e.g. a Cloudflare AI
   * Gateway: https://gateway.ai.cloudflare.com/v1/<account id>/<gateway id>/anthropic. Read by both workers.
   */
  ANTHROPIC_BASE_URL?: string;
  /**
   * "anthropic" (ANTHROPIC_API_KEY required) or "offline" (the embedded offline model). Unset:
   * Anthropic with a key; without one, the offline model under local dev and a 503
   * `model_not_configured` on every turn (and failing fold jobs) anywhere else.
   */
  MODEL_PROVIDER?: string;
  /** Bearer token for /v1/admin routes. Required outside local dev. */
  ADMIN_TOKEN?: string;
  /** The dev tenant's API key under local dev (default "dev-local-key"). */
  DEV_API_KEY?: string;
  /** "true" only under `npm start` and the tests: bootstraps the dev tenant and the dev defaults. */
  DEV_BOOTSTRAP?: string;
  /** Requests per minute per API key (default 600); "0" turns the limit off. */
  RATE_LIMIT_PER_MINUTE?: string;
  /** Turns per minute per API key (default 60); "0" turns the limit off. */
  TURN_RATE_LIMIT_PER_MINUTE?: string;
  /** Failed authentications (unknown, revoked or expired keys, bad tickets) per minute per client address (default 60); "0" turns the limit off. */
  AUTH_FAILURES_PER_MINUTE?: string;
  /** Seconds before a failed automation attempt is retried (default 30), doubled per attempt. */
  AUTOMATION_RETRY_DELAY_SECONDS?: string;
  /** "true" lets tenant tools (MCP servers) reach loopback addresses: local dev and the tests only. */
  ALLOW_LOOPBACK_TOOLS?: string;
  /** 32 random bytes, base64 (a secret): seals tool secrets such as an MCP server's auth header. */
  TOOL_SECRETS_KEY?: string;
  /** Due automations one cron invocation claims (default 100); more are claimed by continuations on the automation queue. */
  AUTOMATION_CLAIM_PAGE?: string;
  /** Days a tenant-wide export and its file are kept after it finished (default 7; fractions allowed), then the cron removes them. */
  EXPORT_RETENTION_DAYS?: string;
}
