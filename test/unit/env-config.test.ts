// The one schema of the workers' variables (core/env-config.ts): defaults when unset, every kind of
// bad value refused by name, one parse per env object, and no variable read that it does not know.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ENV_VARS, EnvConfigError, envConfig, parseEnvConfig } from "../../core/env-config";
import { DEFAULT_MODEL } from "../../core/models/catalog";

const root = new URL("../..", import.meta.url).pathname;
const problemsOf = (env: Record<string, unknown>): string[] => {
  try {
    parseEnvConfig(env);
  } catch (err) {
    if (err instanceof EnvConfigError) return err.problems;
    throw err;
  }
  return [];
};

afterEach(() => vi.restoreAllMocks());

describe("envConfig", () => {
  it("gives every variable its default when unset or blank", () => {
    const defaults = {
      MODEL_PROVIDER: undefined,
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_BASE_URL: undefined,
      DEFAULT_MODEL,
      ADMIN_TOKEN: undefined,
      DEV_BOOTSTRAP: false,
      DEV_API_KEY: "dev-local-key",
      RATE_LIMIT_PER_MINUTE: 600,
      TURN_RATE_LIMIT_PER_MINUTE: 60,
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: 300,
      AUTH_FAILURES_PER_MINUTE: 60,
      AUTOMATION_CLAIM_PAGE: 100,
      CORTEX_ROUTE_TTL_SECONDS: 60,
      AUTOMATION_RETRY_DELAY_SECONDS: 30,
      EXPORT_RETENTION_DAYS: 7,
      ALLOW_LOOPBACK_TOOLS: false,
      TOOL_SECRETS_KEY: undefined,
      SEMANTIC_SEARCH: undefined,
    };
    expect(parseEnvConfig({})).toEqual(defaults);
    const blank = Object.fromEntries(Object.keys(ENV_VARS).map((name) => [name, "  "]));
    expect(parseEnvConfig(blank)).toEqual(defaults);
  });

  it("parses good values into their types, trimmed", () => {
    const key = btoa("k".repeat(32));
    const config = parseEnvConfig({
      MODEL_PROVIDER: " offline ",
      ANTHROPIC_BASE_URL: "https://gateway.example/anthropic",
      DEV_BOOTSTRAP: "true",
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "7",
      AUTOMATION_RETRY_DELAY_SECONDS: "0.5",
      EXPORT_RETENTION_DAYS: "0.25",
      ALLOW_LOOPBACK_TOOLS: "false",
      TOOL_SECRETS_KEY: ` ${key} `,
      SEMANTIC_SEARCH: "local",
      AUTOMATION_CLAIM_PAGE: 2,
    });
    expect(config).toMatchObject({
      MODEL_PROVIDER: "offline",
      ANTHROPIC_BASE_URL: "https://gateway.example/anthropic",
      DEV_BOOTSTRAP: true,
      RATE_LIMIT_PER_MINUTE: 0,
      TURN_RATE_LIMIT_PER_MINUTE: 7,
      AUTOMATION_RETRY_DELAY_SECONDS: 0.5,
      EXPORT_RETENTION_DAYS: 0.25,
      ALLOW_LOOPBACK_TOOLS: false,
      TOOL_SECRETS_KEY: key,
      SEMANTIC_SEARCH: "local",
      AUTOMATION_CLAIM_PAGE: 2,
    });
  });

  it("names each kind of bad value and what it must be", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ RATE_LIMIT_PER_MINUTE: "ten" }, `RATE_LIMIT_PER_MINUTE must be a whole number >= 0, got "ten"`],
      [{ TURN_RATE_LIMIT_PER_MINUTE: "1.5" }, `TURN_RATE_LIMIT_PER_MINUTE must be a whole number >= 0, got "1.5"`],
      [{ AUTH_FAILURES_PER_MINUTE: "-1" }, `AUTH_FAILURES_PER_MINUTE must be a whole number >= 0, got "-1"`],
      [{ AUTOMATION_CLAIM_PAGE: "0" }, `AUTOMATION_CLAIM_PAGE must be a whole number >= 1, got "0"`],
      [
        { AUTOMATION_RETRY_DELAY_SECONDS: "soon" },
        `AUTOMATION_RETRY_DELAY_SECONDS must be a number of seconds >= 0, got "soon"`,
      ],
      [
        { EXPORT_RETENTION_DAYS: "0" },
        `EXPORT_RETENTION_DAYS must be a number of days > 0 (fractions allowed), got "0"`,
      ],
      [{ DEV_BOOTSTRAP: "1" }, `DEV_BOOTSTRAP must be "true" or "false", got "1"`],
      [{ ALLOW_LOOPBACK_TOOLS: "yes" }, `ALLOW_LOOPBACK_TOOLS must be "true" or "false", got "yes"`],
      [{ MODEL_PROVIDER: "openai" }, `MODEL_PROVIDER must be "anthropic" or "offline", got "openai"`],
      [{ SEMANTIC_SEARCH: "on" }, `SEMANTIC_SEARCH must be "local" or "off", got "on"`],
      [
        { ANTHROPIC_BASE_URL: "gateway.example" },
        `ANTHROPIC_BASE_URL must be an http(s) URL, such as https://gateway.ai.cloudflare.com/v1/<account>/<gateway>/anthropic, got "gateway.example"`,
      ],
      [
        { DEFAULT_MODEL: "claude sonnet" },
        `DEFAULT_MODEL must be a model id (letters, digits and . _ : @ - only), got "claude sonnet"`,
      ],
      [{ RATE_LIMIT_PER_MINUTE: { n: 1 } }, "RATE_LIMIT_PER_MINUTE must be a whole number >= 0, got a object"],
    ];
    for (const [env, problem] of cases) expect(problemsOf(env)).toEqual([problem]);
  });

  it("never echoes a secret's value", () => {
    const [problem] = problemsOf({ TOOL_SECRETS_KEY: btoa("short-key") });
    expect(problem).toBe(
      "TOOL_SECRETS_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`), got a value of 12 characters",
    );
    expect(problem).not.toContain(btoa("short-key"));
  });

  it("lists every bad variable in one error", () => {
    expect(() => parseEnvConfig({ RATE_LIMIT_PER_MINUTE: "ten", DEV_BOOTSTRAP: "yes" })).toThrow(
      `invalid configuration: DEV_BOOTSTRAP must be "true" or "false", got "yes"; RATE_LIMIT_PER_MINUTE must be a whole number >= 0, got "ten"`,
    );
  });

  it("parses once per env object, and logs a bad one once while every read throws", () => {
    const env = { RATE_LIMIT_PER_MINUTE: "5" };
    const first = envConfig(env);
    env.RATE_LIMIT_PER_MINUTE = "9";
    expect(envConfig(env)).toBe(first);
    expect(envConfig(env).RATE_LIMIT_PER_MINUTE).toBe(5);
    expect(envConfig({ ...env }).RATE_LIMIT_PER_MINUTE).toBe(9);

    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const bad = { TURN_RATE_LIMIT_PER_MINUTE: "many" };
    for (let i = 0; i < 3; i++) expect(() => envConfig(bad)).toThrow(EnvConfigError);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0][0]).toContain(`TURN_RATE_LIMIT_PER_MINUTE must be a whole number >= 0, got "many"`);
  });

  it("knows every variable the workers declare or the test pool sets, and nothing else", () => {
    const declared = (path: string) =>
      [...readFileSync(`${root}${path}`, "utf8").matchAll(/^\s+([A-Z][A-Z0-9_]+)\?: string;/gm)].map((m) => m[1]);
    const vars = (path: string) => {
      const toml = readFileSync(`${root}${path}`, "utf8");
      return [...toml.matchAll(/^\[(?:env\.\w+\.)?vars\]\n((?:[A-Z_]+ = .*\n)+)/gm)].flatMap((m) =>
        m[1]
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split(" ")[0]),
      );
    };
    const pool = [...readFileSync(`${root}test/workers/vitest.config.ts`, "utf8").matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)]
      .map((m) => m[1])
      .filter((n) => n !== "TEST_MIGRATIONS" && n !== "TEST_CORTEX_MIGRATIONS");
    const known = new Set(Object.keys(ENV_VARS));
    const read = new Set([
      ...declared("workers/env.d.ts"),
      ...declared("services/semantic/env.d.ts"),
      ...vars("wrangler.toml"),
      ...vars("workers/summarizer/wrangler.toml"),
      ...pool,
    ]);
    expect([...read].filter((n) => !known.has(n))).toEqual([]);
    expect([...known].filter((n) => !read.has(n))).toEqual([]);
    expect(vars("wrangler.toml")).toContain("DEFAULT_MODEL");
  });
});
