// Secrets and local-only switches that wrangler.toml does not declare (wrangler types only sees
// [vars] and bindings), as the raw strings the platform hands over. Code never reads them here:
// their types, defaults and meanings are core/env-config.ts's schema, read through envConfig(env).
interface __BaseEnv_Env {
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  MODEL_PROVIDER?: string;
  ADMIN_TOKEN?: string;
  DEV_API_KEY?: string;
  DEV_BOOTSTRAP?: string;
  RATE_LIMIT_PER_MINUTE?: string;
  TURN_RATE_LIMIT_PER_MINUTE?: string;
  TENANT_TURN_RATE_LIMIT_PER_MINUTE?: string;
  AUTH_FAILURES_PER_MINUTE?: string;
  AUTOMATION_RETRY_DELAY_SECONDS?: string;
  ALLOW_LOOPBACK_TOOLS?: string;
  TOOL_SECRETS_KEY?: string;
  AUTOMATION_CLAIM_PAGE?: string;
  EXPORT_RETENTION_DAYS?: string;
  CORTEX_ROUTE_TTL_SECONDS?: string;
}
