/**
 * Tool definitions: custom tools (name, input_schema), the web search / web fetch server tools with
 * the parameters each version documents, and the other Anthropic-defined tool types the SDK names,
 * each with its fixed name and its own fields (the platform sends none of them, but a request that
 * does is held to the same schema as on the real API), the MCP connector's mcp_toolset under its
 * beta (checked in beta-config.ts); an unknown type is refused.
 */
import { metaSchemaProblem } from "../../json-schema";
import { invalid } from "../errors";
import { checkMcpToolset, hasToolsetBeta } from "./beta-config";
import { checkCacheControl, checkFields, checkValue } from "./fields";
import { isObject, literal, type Rule } from "./context";

/** The API's pattern for input_schema's top-level property names (its own copy: the stand-in checks the platform, not itself). */
const PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

const COMMON = ["allowed_callers", "cache_control", "defer_loading", "strict"];
const SEARCH = [...COMMON, "allowed_domains", "blocked_domains", "max_uses", "user_location"];
const FETCH = [
  ...COMMON,
  "allowed_domains",
  "blocked_domains",
  "citations",
  "max_content_tokens",
  "max_uses",
  "url_sources",
];

/** Server tool versions and their optional fields (SDK WebSearchTool* / WebFetchTool*). */
export const SERVER_TOOLS: Record<string, { name: "web_search" | "web_fetch"; fields: string[] }> = {
  web_search_20250305: { name: "web_search", fields: SEARCH },
  web_search_20260209: { name: "web_search", fields: SEARCH },
  web_search_20260318: { name: "web_search", fields: [...SEARCH, "response_inclusion"] },
  web_fetch_20250910: { name: "web_fetch", fields: FETCH },
  web_fetch_20260209: { name: "web_fetch", fields: FETCH },
  web_fetch_20260309: { name: "web_fetch", fields: [...FETCH, "use_cache"] },
  web_fetch_20260318: { name: "web_fetch", fields: [...FETCH, "use_cache", "response_inclusion"] },
};
/**
 * The server tool a type names, if any. Own keys only: a type such as "toString" or "constructor"
 * would otherwise find the object's prototype and reach the checks as if it were a server tool.
 */
const serverTool = (type: unknown) =>
  typeof type === "string" && Object.hasOwn(SERVER_TOOLS, type) ? SERVER_TOOLS[type] : undefined;
const CUSTOM = [
  "input_schema",
  "name",
  "allowed_callers",
  "cache_control",
  "defer_loading",
  "description",
  "eager_input_streaming",
  "input_examples",
  "strict",
  "type",
];
/** The fields of the SDK's client tools with a name (ToolBash20250124, MemoryTool20250818, ToolTextEditor*). */
const CLIENT = [...COMMON, "input_examples"];

interface TypedTool {
  /** The name the type fixes; null for a toolset, which has no name field. */
  name: string | null;
  fields: readonly string[];
  /** A toolset's member tools: the keys its `configs` may have. */
  members?: readonly string[];
}
const BROWSER_MEMBERS = [
  "close_tab",
  "double_click",
  "file_upload",
  "find",
  "form_input",
  "get_page_text",
  "hold_key",
  "hover",
  "javascript_exec",
  "key",
  "left_click",
  "left_click_drag",
  "left_mouse_down",
  "left_mouse_up",
  "list_tabs",
  "middle_click",
  "mouse_move",
  "navigate",
  "new_tab",
  "read_console",
  "read_network",
  "read_page",
  "right_click",
  "screenshot",
  "scroll",
  "scroll_to",
  "switch_tab",
  "triple_click",
  "type",
  "wait",
  "zoom",
];
const COMPUTER_MEMBERS = [
  "cursor_position",
  "double_click",
  "hold_key",
  "key",
  "left_click",
  "left_click_drag",
  "left_mouse_down",
  "left_mouse_up",
  "middle_click",
  "mouse_move",
  "right_click",
  "screenshot",
  "scroll",
  "triple_click",
  "type",
  "wait",
  "zoom",
];
/**
 * The other tool types of the SDK's ToolUnion, each with the name its type fixes and its optional
 * fields, as the pinned SDK declares them (node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts:
 * ToolBash20250124, CodeExecutionTool*, BrowserToolset20260801, MemoryTool20250818,
 * ComputerToolset20260801, ToolTextEditor20250124/20250429/20250728, ToolSearchToolBm25_20251119,
 * ToolSearchToolRegex20251119). Only text_editor_20250728 has max_characters; code execution and tool
 * search take no input_examples; a toolset has no name, only cache_control and configs.
 */
const TYPED_TOOLS: Record<string, TypedTool> = {
  bash_20250124: { name: "bash", fields: CLIENT },
  code_execution_20250522: { name: "code_execution", fields: COMMON },
  code_execution_20250825: { name: "code_execution", fields: COMMON },
  code_execution_20260120: { name: "code_execution", fields: COMMON },
  code_execution_20260521: { name: "code_execution", fields: COMMON },
  browser_toolset_20260801: { name: null, fields: ["cache_control", "configs"], members: BROWSER_MEMBERS },
  memory_20250818: { name: "memory", fields: CLIENT },
  computer_toolset_20260801: { name: null, fields: ["cache_control", "configs"], members: COMPUTER_MEMBERS },
  text_editor_20250124: { name: "str_replace_editor", fields: CLIENT },
  text_editor_20250429: { name: "str_replace_based_edit_tool", fields: CLIENT },
  text_editor_20250728: { name: "str_replace_based_edit_tool", fields: [...CLIENT, "max_characters"] },
  tool_search_tool_bm25_20251119: { name: "tool_search_tool_bm25", fields: COMMON },
  tool_search_tool_bm25: { name: "tool_search_tool_bm25", fields: COMMON },
  tool_search_tool_regex_20251119: { name: "tool_search_tool_regex", fields: COMMON },
  tool_search_tool_regex: { name: "tool_search_tool_regex", fields: COMMON },
};

const NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from";

/**
 * A toolset's configs: its member tools only, each `{enabled?, defer_loading?}` or null (SDK
 * BrowserToolsetConfigs, ComputerToolsetConfigs: "Unknown keys are rejected: the field set is this
 * toolset version's complete member set"). A member named `type` is a key like any other here.
 */
function checkToolsetConfigs(configs: unknown, { path, members }: { path: string; members: readonly string[] }): void {
  if (configs === undefined || configs === null) return;
  if (!isObject(configs)) throw invalid(`${path}: ${NOT_AN_OBJECT}`);
  checkFields(configs, { fields: { required: [], optional: members }, path, ignore: [] });
  for (const [member, config] of Object.entries(configs)) {
    if (config === null) continue;
    if (!isObject(config)) throw invalid(`${path}.${member}: ${NOT_AN_OBJECT}`);
    const fields = { required: [], optional: ["defer_loading", "enabled"] };
    checkFields(config, { fields, path: `${path}.${member}`, ignore: [] });
    // SDK ComputerScreenshotConfig, BrowserNavigateConfig, …: `boolean | null` each.
    for (const key of ["defer_loading", "enabled"])
      checkValue(config[key], { typed: { kind: "boolean", nullable: true }, path: `${path}.${member}.${key}` });
  }
}

/** Who may call an Anthropic-defined tool (the SDK's `allowed_callers` items, on every TYPED_TOOLS type that has the field). */
const CALLERS = ["direct", "code_execution_20250825", "code_execution_20260120", "code_execution_20260521"];

/**
 * The values of a typed tool's optional fields, as the pinned SDK types them (generated from the
 * API's schema): `allowed_callers?: Array<CALLERS>`, `defer_loading?: boolean`, `strict?: boolean`,
 * `input_examples?: Array<{[key: string]: unknown}>` and text_editor_20250728's `max_characters?:
 * number | null`, an integer of at least 1 (https://platform.claude.com/docs/en/api/messages:
 * "minimum: 1"; the Python SDK types it `Optional[int]`). None is nullable but max_characters. Strict,
 * as for the body's fields: a "false" is not a boolean, a "10000" not an integer.
 */
function checkTypedToolValues(tool: Record<string, unknown>, path: string): void {
  if (tool.allowed_callers !== undefined) {
    if (!Array.isArray(tool.allowed_callers)) throw invalid(`${path}.allowed_callers: Input should be a valid list`);
    for (const [i, caller] of tool.allowed_callers.entries())
      literal(caller, { path: `${path}.allowed_callers.${i}`, values: CALLERS });
  }
  for (const key of ["defer_loading", "strict"])
    checkValue(tool[key], { typed: { kind: "boolean" }, path: `${path}.${key}` });
  if (tool.input_examples !== undefined) {
    if (!Array.isArray(tool.input_examples)) throw invalid(`${path}.input_examples: Input should be a valid list`);
    for (const [i, example] of tool.input_examples.entries())
      if (!isObject(example)) throw invalid(`${path}.input_examples.${i}: Input should be a valid dictionary`);
  }
  const max = tool.max_characters;
  if (max === undefined || max === null) return;
  if (typeof max !== "number" || !Number.isInteger(max))
    throw invalid(`${path}.max_characters: Input should be a valid integer`);
  if (max < 1) throw invalid(`${path}.max_characters: Input should be greater than or equal to 1`);
}

/**
 * One tool of TYPED_TOOLS: no field its type does not declare, its fixed name, a valid cache_control,
 * its other fields' values and a toolset's configs.
 */
function checkTypedTool(tool: Record<string, unknown>, { spec, path }: { spec: TypedTool; path: string }): void {
  checkFields(tool, { fields: { required: spec.name === null ? [] : ["name"], optional: spec.fields }, path });
  if (spec.name !== null && tool.name !== spec.name) throw invalid(`${path}.name: Input should be '${spec.name}'`);
  checkCacheControl(tool.cache_control, path);
  checkTypedToolValues(tool, path);
  if (spec.members) checkToolsetConfigs(tool.configs, { path: `${path}.configs`, members: spec.members });
}

export const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;
const isCustom = (tool: Record<string, unknown>) =>
  tool.type === undefined || tool.type === null || tool.type === "custom";
const toolsOf = (body: Record<string, unknown>) => (Array.isArray(body.tools) ? body.tools : []) as unknown[];

/**
 * Known tool types and their fields; an Anthropic-defined tool's name is the one its type fixes.
 * Sources: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference and the
 * pinned SDK's types (TYPED_TOOLS); the MCP connector's mcp_toolset under its beta
 * (https://platform.claude.com/docs/en/agents-and-tools/mcp-connector, SDK BetaMCPToolset).
 */
export const toolTypes: Rule = ({ body, model, betas }) => {
  // The MCP connector's toolset is a tool type of its beta only (beta-config.ts); without a version
  // that has it, it is a tag like any unknown one.
  const mcp = hasToolsetBeta(betas);
  for (const [n, tool] of toolsOf(body).entries()) {
    if (!isObject(tool))
      throw invalid(`tools.${n}: Input should be a valid dictionary or object to extract fields from`);
    const server = serverTool(tool.type);
    if (isCustom(tool)) {
      checkFields(tool, {
        fields: { required: ["input_schema", "name"], optional: CUSTOM },
        path: `tools.${n}.custom`,
        ignore: [],
      });
      checkCacheControl(tool.cache_control, `tools.${n}.custom`);
    } else if (server) {
      checkFields(tool, { fields: { required: ["name"], optional: server.fields }, path: `tools.${n}.${tool.type}` });
      if (tool.name !== server.name) throw invalid(`tools.${n}.${tool.type}.name: Input should be '${server.name}'`);
      checkCacheControl(tool.cache_control, `tools.${n}.${tool.type}`);
    } else if (typeof tool.type === "string" && Object.hasOwn(TYPED_TOOLS, tool.type)) {
      checkTypedTool(tool, { spec: TYPED_TOOLS[tool.type], path: `tools.${n}.${tool.type}` });
    } else if (mcp && tool.type === "mcp_toolset") {
      checkMcpToolset(tool, `tools.${n}.mcp_toolset`);
    } else if (typeof tool.type === "string" && /^[a-z_]+_\d{8}$/.test(tool.type)) {
      // An Anthropic-defined tool type this model does not offer. Source: https://platform.claude.com/docs/en/api/errors
      throw invalid(`'${model.id}' does not support tool types: ${tool.type}.`);
    } else {
      const tags = [
        "custom",
        ...Object.keys(SERVER_TOOLS),
        ...Object.keys(TYPED_TOOLS),
        ...(mcp ? ["mcp_toolset"] : []),
      ]
        .map((t) => `'${t}'`)
        .join(", ");
      throw invalid(
        `tools.${n}: Input tag '${String(tool.type)}' found using 'type' does not match any of the expected tags: ${tags}`,
      );
    }
  }
};

/**
 * Custom tool names match `^[a-zA-Z0-9_-]{1,128}$` (the define-tools page says 64; the API's own
 * message says 128 and the stand-in follows the API). Source:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools
 */
export const toolNamePattern: Rule = ({ body }) => {
  for (const [n, tool] of toolsOf(body).entries()) {
    if (isObject(tool) && isCustom(tool) && (typeof tool.name !== "string" || !NAME_PATTERN.test(tool.name))) {
      throw invalid(`tools.${n}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    }
  }
};

/** Tool names are unique across the request. Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools */
export const toolNamesUnique: Rule = ({ body }) => {
  const names = toolsOf(body)
    .map((tool) => (isObject(tool) ? tool.name : undefined))
    .filter((name) => typeof name === "string");
  if (new Set(names).size !== names.length) throw invalid("tools: Tool names must be unique.");
};

/**
 * input_schema is a JSON Schema of type object, without oneOf / allOf / anyOf at its top level,
 * valid against the JSON Schema 2020-12 meta-schema throughout, its top-level property names
 * matching ^[a-zA-Z0-9_.-]{1,64}$.
 * Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools (wording from the API).
 */
export const toolInputSchema: Rule = ({ body }) => {
  for (const [n, tool] of toolsOf(body).entries()) {
    if (!isObject(tool) || !isCustom(tool)) continue;
    const schema = tool.input_schema;
    if (!isObject(schema))
      throw invalid(
        `tools.${n}.custom.input_schema: Input should be a valid dictionary or object to extract fields from`,
      );
    if (schema.type !== "object") throw invalid(`tools.${n}.custom.input_schema.type: Input should be 'object'`);
    if ("oneOf" in schema || "allOf" in schema || "anyOf" in schema) {
      throw invalid(
        `tools.${n}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`,
      );
    }
    // The whole schema against the 2020-12 meta-schema: a property typed "strin", a property that
    // is no schema. Wording from the API as reported (acomagu/vscode-as-mcp-server#6).
    if (metaSchemaProblem(schema))
      throw invalid(`tools.${n}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12`);
    // Top-level argument names only (nested objects are not checked). Wording from the API as
    // reported (PrefectHQ/fastmcp#839, erikmaday/unusual-whales-mcp#57).
    if (isObject(schema.properties) && Object.keys(schema.properties).some((k) => !PROPERTY_KEY.test(k)))
      throw invalid(
        `tools.${n}.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'`,
      );
  }
};

/**
 * Not every tool may be deferred (tool search needs at least one loaded tool). Source:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool. Wording from Anthropic's claude-api skill.
 */
export const notAllDeferred: Rule = ({ body }) => {
  const tools = toolsOf(body).filter(isObject);
  if (tools.length > 0 && tools.every((tool) => tool.defer_loading === true))
    throw invalid("All tools have defer_loading set");
};

/**
 * At most 20 strict tools. Source: https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide. Wording ours.
 */
export const strictToolLimit: Rule = ({ body }) => {
  const strict = toolsOf(body).filter((tool) => isObject(tool) && tool.strict === true).length;
  if (strict > 20) throw invalid(`tools: A maximum of 20 tools with strict: true may be provided. Found ${strict}.`);
};

/**
 * Server tools only on models that have them (Claude Opus 5 has web search, not web fetch). Sources:
 * https://platform.claude.com/docs/en/api/errors (the same message for any Anthropic-defined tool
 * type the model does not support), https://platform.claude.com/docs/en/models/opus-5/migration-guide.
 */
export const serverToolModel: Rule = ({ body, model }) => {
  const types = toolsOf(body).flatMap((tool) => {
    if (!isObject(tool) || typeof tool.type !== "string") return [];
    const server = serverTool(tool.type);
    return server && !model.serverTools.includes(server.name) ? [tool.type] : [];
  });
  if (types.length > 0) throw invalid(`'${model.id}' does not support tool types: ${types.join(", ")}.`);
};

/**
 * Web search and web fetch parameters: allowed_domains and blocked_domains are exclusive (both is a
 * 400), domains carry no scheme, max_uses is positive, user_location names at least one place field.
 * Sources: https://platform.claude.com/docs/en/agents-and-tools/tool-use/server-tools (domain filtering),
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool. Wording ours.
 */
export const serverToolParameters: Rule = ({ body }) => {
  for (const [n, tool] of toolsOf(body).entries()) {
    if (!isObject(tool) || !serverTool(tool.type)) continue;
    const at = `tools.${n}.${tool.type}`;
    const allowed = tool.allowed_domains;
    const blocked = tool.blocked_domains;
    if (allowed !== undefined && allowed !== null && blocked !== undefined && blocked !== null) {
      throw invalid(`${at}: allowed_domains and blocked_domains cannot be used together; use one or the other`);
    }
    for (const [field, list] of [
      ["allowed_domains", allowed],
      ["blocked_domains", blocked],
    ] as const) {
      if (!Array.isArray(list)) continue;
      for (const [k, domain] of list.entries()) {
        if (typeof domain !== "string" || domain === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(domain)) {
          throw invalid(
            `${at}.${field}.${k}: invalid domain ${JSON.stringify(domain)}: give a domain without a scheme, such as "example.com"`,
          );
        }
      }
    }
    if (
      tool.max_uses !== undefined &&
      tool.max_uses !== null &&
      (!Number.isInteger(tool.max_uses) || (tool.max_uses as number) < 1)
    ) {
      throw invalid(`${at}.max_uses: Input should be greater than 0`);
    }
    const location = tool.user_location;
    if (isObject(location)) {
      if (location.type !== "approximate") throw invalid(`${at}.user_location.type: Input should be 'approximate'`);
      if (
        !["city", "region", "country", "timezone"].some(
          (key) => typeof location[key] === "string" && location[key] !== "",
        )
      ) {
        throw invalid(`${at}.user_location: provide at least one of city, region, country or timezone`);
      }
    }
  }
};
