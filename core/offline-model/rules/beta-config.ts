/**
 * What the beta features' body fields hold, checked once their `anthropic-beta` header has let the
 * field in (bodyFields, fields.ts): context_management's edits, each with its own fields and the
 * shapes of their values, and mcp_servers (the MCP connector), with the connector's mcp_toolset tool
 * and the references between the two. The stand-in simulates neither feature, so a valid value is
 * accepted and ignored; these checks refuse what the real API refuses (in the schema's words where
 * it has them), so a request built wrong fails here as it would there.
 * Sources: the API reference, https://platform.claude.com/docs/en/api/beta/messages (each object's
 * fields, which of them take null, and the `minimum` of each count), the pinned SDK's types generated
 * from it (node_modules/@anthropic-ai/sdk/resources/beta/messages/messages.d.ts),
 * https://platform.claude.com/docs/en/build-with-claude/context-editing and
 * https://platform.claude.com/docs/en/agents-and-tools/mcp-connector.
 */
import { invalid } from "../errors";
import { isObject, literal, type Rule } from "./context";
import { checkCacheControl, checkFields, checkValue, tagError } from "./fields";

const NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from";

/**
 * A count: an integer of at least `min` (the reference's `minimum`; its typed forms say `int` /
 * `Long`). Strict, as for the body's other fields: a "30000" is not an integer.
 */
function checkCount(value: unknown, { path, min }: { path: string; min: number }): void {
  if (typeof value !== "number" || !Number.isInteger(value)) throw invalid(`${path}: Input should be a valid integer`);
  if (value < min) throw invalid(`${path}: Input should be greater than or equal to ${min}`);
}

/** A list of names (SDK `Array<string>`), each a string. */
function checkNames(value: unknown, { path, nullable }: { path: string; nullable: boolean }): void {
  if (value === undefined || (nullable && value === null)) return;
  if (!Array.isArray(value)) throw invalid(`${path}: Input should be a valid list`);
  for (const [i, name] of value.entries())
    if (typeof name !== "string") throw invalid(`${path}.${i}: Input should be a valid string`);
}

/**
 * The kinds a `{type, value}` object may be, each with its value's minimum (null: the kind has no
 * value, as `{type: "all"}`).
 */
type Kinds = Record<string, number | null>;

/**
 * One `{type, value}` object (a trigger, a keep, a clear_at_least). Where several kinds are allowed
 * the schema reads it as a union tagged by `type`, and names the member by its tag in the path;
 * where one is, `type` is a plain literal field.
 */
function checkThreshold(
  value: unknown,
  { path, kinds, nullable }: { path: string; kinds: Kinds; nullable: boolean },
): void {
  if (value === undefined || (nullable && value === null)) return;
  if (!isObject(value)) throw invalid(`${path}: ${NOT_AN_OBJECT}`);
  const tags = Object.keys(kinds);
  const union = tags.length > 1;
  if (union && !Object.hasOwn(kinds, String(value.type))) throw tagError(path, value.type, tags);
  const at = union ? `${path}.${String(value.type)}` : path;
  const min = union ? kinds[String(value.type)] : kinds[tags[0]];
  const required = min === null ? ["type"] : ["type", "value"];
  checkFields(value, { fields: { required, optional: [] }, path: at, ignore: [] });
  if (!union) literal(value.type, { path: `${at}.type`, values: tags });
  if (min !== null) checkCount(value.value, { path: `${at}.value`, min });
}

/**
 * clear_thinking_20251015's keep (SDK `BetaThinkingTurns | BetaAllThinkingTurns | 'all'`): the
 * string "all", or an object tagged `thinking_turns` (value at least 1) or `all`. The union mixes a
 * string with objects, so the schema gives no one sentence for a value that is neither: ours names
 * the three forms.
 */
function checkThinkingKeep(keep: unknown, path: string): void {
  if (keep === undefined || keep === "all") return;
  if (!isObject(keep)) throw invalid(`${path}: Input should be 'all' or an object of type 'thinking_turns' or 'all'`);
  checkThreshold(keep, { path, kinds: { thinking_turns: 1, all: null }, nullable: false });
}

/** One field's check, given the value and its path. */
type FieldCheck = (value: unknown, path: string) => void;
const threshold =
  (kinds: Kinds, nullable = false): FieldCheck =>
  (value, path) =>
    checkThreshold(value, { path, kinds, nullable });

/**
 * The edits context_management may list (SDK BetaContextManagementConfig: `edits?:
 * Array<BetaClearToolUses20250919Edit | BetaClearThinking20251015Edit | BetaCompact20260112Edit>`),
 * each with its fields and what they hold. Nullable where the SDK's types say `| null`: a null
 * trigger or keep on clear_tool_uses is refused, a null clear_at_least or compaction trigger taken.
 */
const CONTEXT_EDITS: Record<string, Record<string, FieldCheck>> = {
  clear_tool_uses_20250919: {
    clear_at_least: threshold({ input_tokens: 0 }, true),
    clear_tool_inputs: (value, path) => {
      if (typeof value === "boolean") return;
      if (value !== undefined && value !== null && !Array.isArray(value))
        throw invalid(`${path}: Input should be a valid boolean or a valid list`);
      checkNames(value, { path, nullable: true });
    },
    exclude_tools: (value, path) => checkNames(value, { path, nullable: true }),
    keep: threshold({ tool_uses: 0 }),
    trigger: threshold({ input_tokens: 1, tool_uses: 1 }),
  },
  clear_thinking_20251015: { keep: checkThinkingKeep },
  compact_20260112: {
    instructions: (value, path) => checkValue(value, { typed: { kind: "string", nullable: true }, path }),
    pause_after_compaction: (value, path) => checkValue(value, { typed: { kind: "boolean" }, path }),
    trigger: threshold({ input_tokens: 1 }, true),
  },
};

/**
 * context_management holds only `edits`, a list of CONTEXT_EDITS' types, each with only its own
 * fields and each field of its shape. An `edits: null` is let through: the SDK does not type it
 * nullable, but nothing says the API refuses it.
 */
export const contextManagement: Rule = ({ body }) => {
  const value = body.context_management;
  if (value === undefined || value === null) return;
  if (!isObject(value)) throw invalid(`context_management: ${NOT_AN_OBJECT}`);
  checkFields(value, { fields: { required: [], optional: ["edits"] }, path: "context_management", ignore: [] });
  if (value.edits === undefined || value.edits === null) return;
  if (!Array.isArray(value.edits)) throw invalid("context_management.edits: Input should be a valid list");
  for (const [k, edit] of value.edits.entries()) {
    const at = `context_management.edits.${k}`;
    if (!isObject(edit)) throw invalid(`${at}: ${NOT_AN_OBJECT}`);
    const type = String(edit.type);
    if (!Object.hasOwn(CONTEXT_EDITS, type)) throw tagError(at, edit.type, Object.keys(CONTEXT_EDITS));
    const fields = CONTEXT_EDITS[type];
    checkFields(edit, { fields: { required: [], optional: Object.keys(fields) }, path: `${at}.${type}` });
    for (const [key, check] of Object.entries(fields)) check(edit[key], `${at}.${type}.${key}`);
  }
};

/** An MCP server's fields (SDK BetaRequestMCPServerURLDefinition, one type rather than a union). */
const MCP_SERVER = { required: ["name", "type", "url"], optional: ["authorization_token", "tool_configuration"] };

/**
 * mcp_servers: a list of `{type: "url", url, name, authorization_token?, tool_configuration?}`,
 * tool_configuration `{enabled?, allowed_tools?}`, nothing else, each field of its type. The docs'
 * own rules on top (https://platform.claude.com/docs/en/agents-and-tools/mcp-connector, field
 * descriptions): the url "Must start with https://" and the name is "A unique identifier for this
 * MCP server"; those two messages are ours, the docs giving none. A null list is let through, as
 * context_management's edits are.
 */
export const mcpServers: Rule = ({ body }) => {
  const servers = body.mcp_servers;
  if (servers === undefined || servers === null) return;
  if (!Array.isArray(servers)) throw invalid("mcp_servers: Input should be a valid list");
  const names = new Set<string>();
  for (const [k, server] of servers.entries()) {
    const at = `mcp_servers.${k}`;
    if (!isObject(server)) throw invalid(`${at}: ${NOT_AN_OBJECT}`);
    checkFields(server, { fields: MCP_SERVER, path: at, ignore: [] });
    literal(server.type, { path: `${at}.type`, values: ["url"] });
    checkValue(server.name, { typed: { kind: "string" }, path: `${at}.name` });
    checkValue(server.url, { typed: { kind: "string" }, path: `${at}.url` });
    checkValue(server.authorization_token, {
      typed: { kind: "string", nullable: true },
      path: `${at}.authorization_token`,
    });
    const config = server.tool_configuration;
    if (config !== undefined && config !== null) {
      const path = `${at}.tool_configuration`;
      if (!isObject(config)) throw invalid(`${path}: ${NOT_AN_OBJECT}`);
      checkFields(config, { fields: { required: [], optional: ["allowed_tools", "enabled"] }, path, ignore: [] });
      checkValue(config.enabled, { typed: { kind: "boolean", nullable: true }, path: `${path}.enabled` });
      checkNames(config.allowed_tools, { path: `${path}.allowed_tools`, nullable: true });
    }
    // The scheme alone, without regard to case: the docs ask for nothing more of the URL.
    if (!/^https:\/\//i.test(server.url as string))
      throw invalid(`${at}.url: the URL of an MCP server must start with https://`);
    if (names.has(server.name as string)) throw invalid("mcp_servers: MCP server names must be unique.");
    names.add(server.name as string);
  }
};

/**
 * The connector versions whose requests configure a server through an mcp_toolset tool: the docs'
 * current one ("Current version: This feature requires the beta header: mcp-client-2025-11-20"; its
 * migration guide: "Tool configuration now lives in the `tools` array as MCPToolset objects") and
 * the later one the pinned SDK's AnthropicBeta lists. The deprecated mcp-client-2025-04-04 keeps its
 * servers' own tool_configuration and has no toolset.
 */
export const MCP_TOOLSET_BETAS: readonly string[] = ["mcp-client-2025-11-20", "mcp-client-2026-09-15"];
export const hasToolsetBeta = (betas: readonly string[]) => betas.some((beta) => MCP_TOOLSET_BETAS.includes(beta));

/**
 * A toolset's default_config or one of its configs (SDK BetaMCPToolDefaultConfig, BetaMCPToolConfig:
 * `{defer_loading?: boolean, enabled?: boolean}`); neither field is typed nullable, so a null is
 * refused as a "false" is, as on the other tools' defer_loading.
 */
function checkMcpToolConfig(config: unknown, path: string): void {
  if (!isObject(config)) throw invalid(`${path}: ${NOT_AN_OBJECT}`);
  checkFields(config, { fields: { required: [], optional: ["defer_loading", "enabled"] }, path, ignore: [] });
  for (const key of ["defer_loading", "enabled"])
    checkValue(config[key], { typed: { kind: "boolean" }, path: `${path}.${key}` });
}

/**
 * The toolset's pinned tool listing (SDK `tools?: Array<BetaMCPToolParam> | null`, each
 * `{name: string, input_schema: {[key: string]: unknown}, description?: string | null}`), copied
 * from an earlier response's mcp_tool_listing block. The SDK does not say which connector version
 * brought it, so every toolset version takes it.
 */
function checkPinnedListing(listing: unknown, path: string): void {
  if (listing === undefined || listing === null) return;
  if (!Array.isArray(listing)) throw invalid(`${path}: Input should be a valid list`);
  for (const [i, tool] of listing.entries()) {
    const at = `${path}.${i}`;
    if (!isObject(tool)) throw invalid(`${at}: ${NOT_AN_OBJECT}`);
    checkFields(tool, {
      fields: { required: ["input_schema", "name"], optional: ["description"] },
      path: at,
      ignore: [],
    });
    if (!isObject(tool.input_schema)) throw invalid(`${at}.input_schema: Input should be a valid dictionary`);
    checkValue(tool.name, { typed: { kind: "string" }, path: `${at}.name` });
    checkValue(tool.description, { typed: { kind: "string", nullable: true }, path: `${at}.description` });
  }
}

/** An mcp_toolset's fields (SDK BetaMCPToolset): mcp_server_name required, the rest optional. */
const MCP_TOOLSET = {
  required: ["mcp_server_name"],
  optional: ["cache_control", "configs", "default_config", "tools"],
};

/**
 * One mcp_toolset tool, as the pinned SDK's BetaMCPToolset declares it
 * (node_modules/@anthropic-ai/sdk/resources/beta/messages/messages.d.ts) and the connector docs'
 * field table gives it: `mcp_server_name` a string, `cache_control` a breakpoint or null,
 * `default_config` one tool config, `configs` (or null) tool configs keyed by any tool name ("If a
 * tool name in `configs` doesn't exist on the MCP server, a backend warning is logged but no error is
 * returned"), `tools` the pinned listing, nothing else. The caller (toolTypes) takes the type only
 * under MCP_TOOLSET_BETAS; which server it names is mcpToolsetReferences' concern.
 */
export function checkMcpToolset(tool: Record<string, unknown>, path: string): void {
  checkFields(tool, { fields: MCP_TOOLSET, path });
  checkValue(tool.mcp_server_name, { typed: { kind: "string" }, path: `${path}.mcp_server_name` });
  checkCacheControl(tool.cache_control, path);
  if (tool.default_config !== undefined) checkMcpToolConfig(tool.default_config, `${path}.default_config`);
  const configs = tool.configs;
  if (configs !== undefined && configs !== null) {
    if (!isObject(configs)) throw invalid(`${path}.configs: ${NOT_AN_OBJECT}`);
    for (const [name, config] of Object.entries(configs)) checkMcpToolConfig(config, `${path}.configs.${name}`);
  }
  checkPinnedListing(tool.tools, `${path}.tools`);
}

/**
 * The connector's validation rules between `mcp_servers` and the toolsets, under MCP_TOOLSET_BETAS
 * only (the deprecated version configures tools on the server). Source:
 * https://platform.claude.com/docs/en/agents-and-tools/mcp-connector ("Validation rules": "Server
 * must exist", "Server must be used: Every MCP server defined in `mcp_servers` must be referenced by
 * exactly one MCPToolset", "Unique toolset per server"). The docs give no wording: the messages are
 * ours. Runs after mcpServers and toolTypes, so every name here is a string.
 */
export const mcpToolsetReferences: Rule = ({ body, betas }) => {
  if (!hasToolsetBeta(betas)) return;
  const servers = (Array.isArray(body.mcp_servers) ? body.mcp_servers : []).filter(isObject);
  const names = servers.map((server) => server.name as string);
  const referencedAt = new Map<string, number>();
  for (const [n, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    if (!isObject(tool) || tool.type !== "mcp_toolset") continue;
    const name = tool.mcp_server_name as string;
    const at = `tools.${n}.mcp_toolset.mcp_server_name`;
    if (!names.includes(name)) throw invalid(`${at}: no MCP server named '${name}' is defined in mcp_servers`);
    const first = referencedAt.get(name);
    if (first !== undefined)
      throw invalid(
        `${at}: MCP server '${name}' is already referenced by the mcp_toolset at tools.${first}; each MCP server can only be referenced by one mcp_toolset`,
      );
    referencedAt.set(name, n);
  }
  for (const [k, name] of names.entries())
    if (!referencedAt.has(name))
      throw invalid(`mcp_servers.${k}: MCP server '${name}' must be referenced by exactly one mcp_toolset in tools`);
};
