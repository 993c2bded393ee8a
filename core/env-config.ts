// Every string variable either worker reads (wrangler.toml [vars], secrets, `.dev.vars`, the test
// pools' bindings): its type, its default and what it means, in one schema. Code reads the parsed
// values through envConfig(env), never env.X itself; bindings (DB, BUCKET, queues, objects) stay on
// env. README.md's table of variables is generated from this file (`npm run env-table`).
//
// Values are trimmed, and a blank value counts as unset. A value that does not parse is an error
// naming the variable and what it must be: Workers have no startup to fail, so the chat worker
// answers every request (even /health) with a 500 `config_invalid` carrying that message, and
// the cron and queue invocations fail with it, until the value is fixed. Falling back to a
// default instead would run a deployment on settings nobody chose (a mistyped rate limit silently
// becoming 600, a mistyped provider silently answering offline) with nothing to show for it.
import { z } from "zod";
import { DEFAULT_MODEL } from "./models/catalog";
import { modelIdSchema } from "./settings";

interface EnvVar<T> {
  /** Parses the trimmed, non-blank value. */
  type: z.ZodType<T>;
  /** What a good value is, for the error: "<NAME> must be <must>, got ...". */
  must: string;
  /** The value when unset; undefined when unset means "not configured". */
  default: T | undefined;
  /** One line for the table of variables. */
  meaning: string;
  /** A secret's value is never echoed in an error or a log line. */
  secret?: boolean;
}

const variable = <T, D extends T | undefined>(spec: EnvVar<T> & { default: D }) => spec;

const wholeNumber = (min: number) =>
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER));
const decimal = z
  .string()
  .regex(/^(\d+(\.\d*)?|\.\d+)$/)
  .transform(Number)
  .pipe(z.number().finite());
const flag = z.enum(["true", "false"]).transform((v) => v === "true");
const text = z.string();
const httpUrl = z.string().refine((v) => {
  try {
    return /^https?:$/.test(new URL(v).protocol);
  } catch {
    return false;
  }
});
const base64Key32 = z.string().refine((v) => {
  try {
    return atob(v).length === 32;
  } catch {
    return false;
  }
});

export const ENV_VARS = {
  MODEL_PROVIDER: variable({
    type: z.enum(["anthropic", "offline"]),
    must: `"anthropic" or "offline"`,
    default: undefined,
    meaning:
      "Which model answers: `anthropic` (needs ANTHROPIC_API_KEY) or `offline` (the embedded offline model); unset: Anthropic with a key, else offline under local dev and a 503 `model_not_configured` on every turn anywhere else.",
  }),
  ANTHROPIC_API_KEY: variable({
    type: text,
    must: "an API key",
    default: undefined,
    meaning: "The Anthropic API key (a secret); required outside local dev unless MODEL_PROVIDER=offline.",
    secret: true,
  }),
  ANTHROPIC_BASE_URL: variable({
    type: httpUrl,
    must: "an http(s) URL, such as https://gateway.ai.cloudflare.com/v1/<account>/<gateway>/anthropic",
    default: undefined,
    meaning: "Where both workers send model calls instead of https://api.anthropic.com, e.g. a Cloudflare AI Gateway.",
  }),
  DEFAULT_MODEL: variable({
    type: text.pipe(modelIdSchema),
    must: "a model id (letters, digits and . _ : @ - only)",
    default: DEFAULT_MODEL,
    meaning:
      "The model new conversations and folds get unless a conversation's settings say otherwise (a retired one moves to its replacement).",
  }),
  ADMIN_TOKEN: variable({
    type: text,
    must: "a token",
    default: undefined,
    meaning:
      "Bearer token for the /v1/admin routes (a secret); required outside local dev, where it is `dev-admin-token`.",
    secret: true,
  }),
  DEV_BOOTSTRAP: variable({
    type: flag,
    must: `"true" or "false"`,
    default: false,
    meaning:
      "`true` only under `npm start`, the tests and the benchmarks: creates the dev tenant and turns on the local-dev defaults.",
  }),
  DEV_API_KEY: variable({
    type: text,
    must: "an API key",
    default: "dev-local-key",
    meaning: "The dev tenant's API key under local dev (DEV_BOOTSTRAP=true).",
    secret: true,
  }),
  RATE_LIMIT_PER_MINUTE: variable({
    type: wholeNumber(0),
    must: "a whole number >= 0",
    default: 600,
    meaning: "Requests per minute per API key; 0 turns the limit off.",
  }),
  TURN_RATE_LIMIT_PER_MINUTE: variable({
    type: wholeNumber(0),
    must: "a whole number >= 0",
    default: 60,
    meaning: "Turns per minute per API key; 0 turns the limit off.",
  }),
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: variable({
    type: wholeNumber(0),
    must: "a whole number >= 0",
    default: 300,
    meaning:
      "Turns per minute per tenant, all its API keys together (each turn also counts against its key's limit); 0 turns the limit off.",
  }),
  AUTH_FAILURES_PER_MINUTE: variable({
    type: wholeNumber(0),
    must: "a whole number >= 0",
    default: 60,
    meaning:
      "Failed authentications (unknown, revoked or expired keys, bad tickets) per minute per client address; 0 turns the limit off.",
  }),
  AUTOMATION_CLAIM_PAGE: variable({
    type: wholeNumber(1),
    must: "a whole number >= 1",
    default: 100,
    meaning: "Due automations one cron invocation claims; more are claimed by continuations on the claims queue.",
  }),
  CORTEX_ROUTE_TTL_SECONDS: variable({
    type: wholeNumber(0),
    must: "a whole number of seconds >= 0",
    default: 60,
    meaning:
      "Seconds an isolate keeps a tenant's cortex route (its D1 shard); a move between shards waits this long between its phases.",
  }),
  AUTOMATION_RETRY_DELAY_SECONDS: variable({
    type: decimal,
    must: "a number of seconds >= 0",
    default: 30,
    meaning: "Seconds before a failed automation attempt is retried, doubled per attempt, at most 600.",
  }),
  EXPORT_RETENTION_DAYS: variable({
    type: decimal.pipe(z.number().gt(0)),
    must: "a number of days > 0 (fractions allowed)",
    default: 7,
    meaning: "Days a tenant-wide export and its file are kept after it finished; then the cron removes them.",
  }),
  ALLOW_LOOPBACK_TOOLS: variable({
    type: flag,
    must: `"true" or "false"`,
    default: false,
    meaning:
      "`true` lets tenant tools (HTTP tools, MCP servers) reach loopback addresses: local dev and the tests only.",
  }),
  TOOL_SECRETS_KEY: variable({
    type: base64Key32,
    must: "32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)",
    default: undefined,
    meaning: "Seals tool secrets such as an MCP server's auth header (a secret); storing one without it is a 503.",
    secret: true,
  }),
  SEMANTIC_SEARCH: variable({
    type: z.enum(["local", "off"]),
    must: `"local" or "off"`,
    default: undefined,
    meaning:
      "`local`: the hashed embedding into SQLite; `off`: lexical only even where AI and VECTORIZE are bound; unset: semantic where they are bound.",
  }),
} as const;

export type EnvVarName = keyof typeof ENV_VARS;

type Parsed<V> = V extends { type: z.ZodType<infer T>; default: infer D }
  ? undefined extends D
    ? T | undefined
    : T
  : never;

/** The parsed variables: numbers as numbers, flags as booleans, an unset optional one undefined. */
export type EnvConfig = { readonly [K in EnvVarName]: Parsed<(typeof ENV_VARS)[K]> };

/** What envConfig reads: any object with the variables (a worker's Env, or a test's plain object). */
export type EnvStrings = { readonly [K in EnvVarName]?: unknown };

export const ENV_CONFIG_INVALID = "config_invalid";

/** One or more variables that do not parse; the message names each and what it must be. */
export class EnvConfigError extends Error {
  readonly type = ENV_CONFIG_INVALID;
  readonly status = 500;
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join("; ")}`);
  }
}

function shown(spec: EnvVar<unknown>, raw: unknown): string {
  if (spec.secret) return typeof raw === "string" ? `a value of ${raw.length} characters` : `a ${typeof raw}`;
  return typeof raw === "string" ? JSON.stringify(raw) : `a ${typeof raw}`;
}

/** Parses every variable; throws an EnvConfigError naming every bad one. Not memoized: see envConfig. */
export function parseEnvConfig(env: EnvStrings): EnvConfig {
  const parsed: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(ENV_VARS) as [EnvVarName, EnvVar<unknown>][]) {
    const raw = env[name];
    // Wrangler [vars] may hold JSON numbers and booleans; they mean what their text means.
    const value = typeof raw === "number" || typeof raw === "boolean" ? String(raw) : raw;
    if (value === undefined || value === null || (typeof value === "string" && value.trim() === "")) {
      parsed[name] = spec.default;
      continue;
    }
    const result = typeof value === "string" ? spec.type.safeParse(value.trim()) : null;
    if (result?.success) parsed[name] = result.data;
    else problems.push(`${name} must be ${spec.must}, got ${shown(spec, raw)}`);
  }
  if (problems.length) throw new EnvConfigError(problems);
  return parsed as unknown as EnvConfig;
}

// An isolate keeps its env object for its life, so this parses once per isolate; a test's
// `{ ...env, X: "1" }` is another object and is parsed on its own. A failure is remembered too:
// it is logged once, then thrown again on every read.
const parsedByEnv = new WeakMap<object, EnvConfig | EnvConfigError>();

/** The parsed variables of `env`, parsed on first use; throws an EnvConfigError when one is bad. */
export function envConfig(env: EnvStrings): EnvConfig {
  let entry = parsedByEnv.get(env);
  if (!entry) {
    try {
      entry = parseEnvConfig(env);
    } catch (err) {
      if (!(err instanceof EnvConfigError)) throw err;
      console.error(err.message);
      entry = err;
    }
    parsedByEnv.set(env, entry);
  }
  if (entry instanceof EnvConfigError) throw entry;
  return entry;
}
