/**
 * Tool definitions: custom tools (name, input_schema) and the web search / web fetch server tools
 * with the parameters each version documents. Other tool types the SDK names are accepted as they
 * are (the platform does not send them); an unknown type is refused.
 */
import { metaSchemaProblem } from "../../json-schema";
import { invalid } from "../errors";
import { checkCacheControl, checkFields } from "./fields";
import { isObject, type Rule } from "./context";

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
/** Tool types of the SDK's ToolUnion that the stand-in takes without checking their fields. */
const OTHER_TYPES = [
  "bash_20250124",
  "code_execution_20250522",
  "code_execution_20250825",
  "code_execution_20260120",
  "code_execution_20260521",
  "browser_toolset_20260801",
  "memory_20250818",
  "computer_toolset_20260801",
  "text_editor_20250124",
  "text_editor_20250429",
  "text_editor_20250728",
  "tool_search_tool_bm25_20251119",
  "tool_search_tool_bm25",
  "tool_search_tool_regex_20251119",
  "tool_search_tool_regex",
];

export const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;
const isCustom = (tool: Record<string, unknown>) =>
  tool.type === undefined || tool.type === null || tool.type === "custom";
const toolsOf = (body: Record<string, unknown>) => (Array.isArray(body.tools) ? body.tools : []) as unknown[];

/** Known tool types and their fields. Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference */
export const toolTypes: Rule = ({ body, model }) => {
  for (const [n, tool] of toolsOf(body).entries()) {
    if (!isObject(tool))
      throw invalid(`tools.${n}: Input should be a valid dictionary or object to extract fields from`);
    if (isCustom(tool)) {
      checkFields(tool, {
        fields: { required: ["input_schema", "name"], optional: CUSTOM },
        path: `tools.${n}.custom`,
        ignore: [],
      });
      checkCacheControl(tool.cache_control, `tools.${n}.custom`);
    } else if (typeof tool.type === "string" && SERVER_TOOLS[tool.type]) {
      const spec = SERVER_TOOLS[tool.type];
      checkFields(tool, { fields: { required: ["name"], optional: spec.fields }, path: `tools.${n}.${tool.type}` });
      if (tool.name !== spec.name) throw invalid(`tools.${n}.${tool.type}.name: Input should be '${spec.name}'`);
      checkCacheControl(tool.cache_control, `tools.${n}.${tool.type}`);
    } else if (typeof tool.type === "string" && /^[a-z_]+_\d{8}$/.test(tool.type) && !OTHER_TYPES.includes(tool.type)) {
      // An Anthropic-defined tool type this model does not offer. Source: https://platform.claude.com/docs/en/api/errors
      throw invalid(`'${model.id}' does not support tool types: ${tool.type}.`);
    } else if (!OTHER_TYPES.includes(String(tool.type))) {
      const tags = ["custom", ...Object.keys(SERVER_TOOLS), ...OTHER_TYPES].map((t) => `'${t}'`).join(", ");
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
  const types = toolsOf(body).flatMap((tool) =>
    isObject(tool) &&
    typeof tool.type === "string" &&
    SERVER_TOOLS[tool.type] &&
    !model.serverTools.includes(SERVER_TOOLS[tool.type].name)
      ? [tool.type]
      : [],
  );
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
    if (!isObject(tool) || typeof tool.type !== "string" || !SERVER_TOOLS[tool.type]) continue;
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
