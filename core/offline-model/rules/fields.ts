/**
 * Fields the API does not define are refused, at every level: the body, each block, cache_control,
 * tool definitions, tool_choice, thinking and output_config. The message is the schema's
 * `<path>: Extra inputs are not permitted`, the path naming the block by its type tag
 * (`messages.65.content.1.tool_use.text`, `tools.3.custom.input_examples`); an unknown type tag
 * or a missing required field gets the schema's own wording too, as does a wrong value type on the
 * fields VALUE_TYPES lists (and a search_result's content, which holds text blocks only).
 * Sources: https://platform.claude.com/docs/en/api/messages (the request schema, which the pinned
 * SDK's types are generated from) and https://platform.claude.com/docs/en/api/errors (a field sent
 * without its beta header "ends in `block_binding: Extra inputs are not permitted`").
 */
import { invalid } from "../errors";
import type { WireBlock } from "../wire";
import { eachBlock, isObject, literal, nestedBlocks, type Rule, systemBlocks } from "./context";

interface Schema {
  required: readonly string[];
  optional: readonly string[];
}
const schema = (required: string[], optional: string[] = []): Schema => ({ required, optional });
const CC = "cache_control";

/** The block types of the SDK's ContentBlockParam; those the platform sends have their fields checked. */
export const BLOCKS: Record<string, Schema | null> = {
  text: schema(["text"], [CC, "citations"]),
  image: schema(["source"], [CC, "transformations"]),
  document: schema(["source"], [CC, "citations", "context", "title"]),
  search_result: schema(["content", "source", "title"], [CC, "citations"]),
  thinking: schema(["signature", "thinking"]),
  redacted_thinking: schema(["data"]),
  tool_use: schema(["id", "input", "name"], [CC, "caller", "toolset_name"]),
  tool_result: schema(["tool_use_id"], [CC, "content", "is_error", "toolset_name"]),
  server_tool_use: schema(["id", "input", "name"], [CC, "caller"]),
  web_search_tool_result: schema(["content", "tool_use_id"], [CC, "caller"]),
  web_fetch_tool_result: schema(["content", "tool_use_id"], [CC, "caller"]),
  code_execution_tool_result: null,
  bash_code_execution_tool_result: null,
  text_editor_code_execution_tool_result: null,
  tool_search_tool_result: null,
  container_upload: null,
};
/** What a tool_result's content array may hold. */
const NESTED: Record<string, Schema | null> = {
  text: BLOCKS.text,
  image: BLOCKS.image,
  document: BLOCKS.document,
  search_result: BLOCKS.search_result,
  tool_reference: schema(["tool_name"], [CC]),
  browser_state: null,
};

const BODY = {
  messages: [
    "max_tokens",
    "messages",
    "model",
    CC,
    "container",
    "diagnostics",
    "inference_geo",
    "metadata",
    "output_config",
    "service_tier",
    "speed",
    "stop_sequences",
    "stream",
    "system",
    "thinking",
    "tool_choice",
    "tools",
  ],
  count_tokens: ["messages", "model", CC, "output_config", "speed", "system", "thinking", "tool_choice", "tools"],
};

const tagList = (tags: string[]) => tags.map((t) => `'${t}'`).join(", ");
export const tagError = (path: string, tag: unknown, tags: string[]) =>
  invalid(
    `${path}: Input tag '${String(tag)}' found using 'type' does not match any of the expected tags: ${tagList(tags)}`,
  );

/** Extra fields, then missing required ones, of one object against its schema. */
export function checkFields(
  value: Record<string, unknown>,
  { fields, path, ignore = ["type"] }: { fields: Schema; path: string; ignore?: readonly string[] },
): void {
  for (const key of Object.keys(value)) {
    if (!ignore.includes(key) && !fields.required.includes(key) && !fields.optional.includes(key))
      throw invalid(`${path}.${key}: Extra inputs are not permitted`);
  }
  for (const key of fields.required) if (!(key in value)) throw invalid(`${path}.${key}: Field required`);
}

/** cache_control: `{type: "ephemeral", ttl?: "5m" | "1h"}` (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). */
export function checkCacheControl(control: unknown, path: string): void {
  if (control === undefined || control === null) return;
  const at = path ? `${path}.cache_control` : "cache_control";
  if (!isObject(control)) throw invalid(`${at}: Input should be a valid dictionary or object to extract fields from`);
  if (control.type !== "ephemeral") throw tagError(at, control.type, ["ephemeral"]);
  checkFields(control, { fields: schema([], ["ttl"]), path: `${at}.ephemeral` });
  literal(control.ttl, { path: `${at}.ephemeral.ttl`, values: ["5m", "1h"] });
}

export interface Typed {
  kind: "string" | "boolean" | "list" | "string-or-list" | "citations";
  nullable?: boolean;
}
const STRING: Typed = { kind: "string" };
const STRING_OR_NULL: Typed = { kind: "string", nullable: true };

/**
 * Value types of the block fields the SDK types narrowly (DocumentBlockParam, SearchResultBlockParam,
 * ToolResultBlockParam, TextBlockParam, CitationsConfigParam); the schema refuses any other type with
 * its own `<path>: Input should be …`. Strict, as for `stream`: a "no" is not a boolean. A text
 * block's `text` is checked here, before the rule on empty text (messages.ts) reads it.
 */
const VALUE_TYPES: Record<string, Record<string, Typed>> = {
  document: { citations: { kind: "citations", nullable: true }, context: STRING_OR_NULL, title: STRING_OR_NULL },
  search_result: { content: { kind: "list" }, source: STRING, title: STRING, citations: { kind: "citations" } },
  tool_result: {
    tool_use_id: STRING,
    content: { kind: "string-or-list" },
    is_error: { kind: "boolean" },
    toolset_name: STRING_OR_NULL,
  },
  text: { text: STRING },
};

/**
 * String fields with a schema maximum, in characters (code points, as the schema counts them): a tool
 * call's name in the history. Source: the API's refusal as reported in anthropics/claude-code#2673
 * ("messages.43.content.1.tool_use.name: String should have at most 200 characters"), which left
 * the conversation stuck on every later request.
 */
const MAX_CHARS: Record<string, Record<string, number>> = {
  tool_use: { name: 200 },
  server_tool_use: { name: 200 },
};

export function checkValue(value: unknown, { typed, path }: { typed: Typed; path: string }): void {
  if (value === undefined || (typed.nullable && value === null)) return;
  if (typed.kind === "string" && typeof value !== "string") throw invalid(`${path}: Input should be a valid string`);
  if (typed.kind === "boolean" && typeof value !== "boolean") throw invalid(`${path}: Input should be a valid boolean`);
  if (typed.kind === "list" && !Array.isArray(value)) throw invalid(`${path}: Input should be a valid list`);
  if (typed.kind === "string-or-list" && typeof value !== "string" && !Array.isArray(value))
    throw invalid(`${path}: Input should be a valid string or a valid list`);
  if (typed.kind !== "citations") return;
  if (!isObject(value)) throw invalid(`${path}: Input should be a valid dictionary or object to extract fields from`);
  checkFields(value, { fields: schema([], ["enabled"]), path, ignore: [] });
  checkValue(value.enabled, { typed: { kind: "boolean" }, path: `${path}.enabled` });
}

/**
 * A search_result's `content` is a list of text blocks (SDK `content: Array<TextBlockParam>`; the
 * search-results page: "Each item in the content array must be a text block"). Source:
 * https://platform.claude.com/docs/en/build-with-claude/search-results. An empty list is taken: the
 * page does not say it is refused.
 */
function checkSearchResultContent(content: unknown[], path: string): void {
  for (const [k, item] of content.entries()) {
    const at = `${path}.content.${k}`;
    if (!isObject(item) || item.type !== "text") throw tagError(at, isObject(item) ? item.type : undefined, ["text"]);
    checkFields(item, { fields: BLOCKS.text!, path: at });
    checkValue(item.text, { typed: STRING, path: `${at}.text` });
    checkCacheControl(item.cache_control, at);
  }
}

function checkBlock(block: WireBlock, path: string, table: Record<string, Schema | null>): void {
  if (!(block.type in table)) throw tagError(path, block.type, Object.keys(table));
  const fields = table[block.type];
  if (!fields) return;
  const at = `${path}.${block.type}`;
  checkFields(block, { fields, path: at });
  if (CC in block) checkCacheControl(block.cache_control, at);
  for (const [key, typed] of Object.entries(VALUE_TYPES[block.type] ?? {}))
    checkValue(block[key], { typed, path: `${at}.${key}` });
  for (const [key, max] of Object.entries(MAX_CHARS[block.type] ?? {})) {
    const value = block[key];
    if (typeof value === "string" && [...value].length > max)
      throw invalid(`${at}.${key}: String should have at most ${max} characters`);
  }
  if (block.type === "search_result") checkSearchResultContent(block.content as unknown[], at);
}

/** What a document's content source holds (SDK `ContentBlockSourceContent = TextBlockParam | ImageBlockParam`). */
const CONTENT_SOURCE: Record<string, Schema | null> = { text: BLOCKS.text, image: BLOCKS.image };

/**
 * One block of a document's `{type: "content", content: [...]}` source, held to the schema of the same
 * block anywhere else: its type tag, no unknown field, its required ones, a string text and a
 * well-formed cache_control. Source: https://platform.claude.com/docs/en/api/messages (the request
 * schema); the path names the block by its tag, as the schema does for a union.
 */
export function checkContentSourceBlock(block: WireBlock, path: string): void {
  checkBlock(block, path, CONTENT_SOURCE);
  if (block.type === "text") checkValue(block.text, { typed: STRING, path: `${path}.text.text` });
}

/**
 * Body fields of beta features, taken only with one of their `anthropic-beta` values (either
 * endpoint); without one they are extra inputs like any unknown field. The stand-in simulates
 * neither feature: the field is accepted and ignored (no MCP server is called, no context is
 * edited) once its shape is checked (beta-config.ts). Sources:
 * https://platform.claude.com/docs/en/agents-and-tools/mcp-connector ("This feature requires the
 * beta header: "anthropic-beta": "mcp-client-2025-04-04""; the later versions are those the pinned
 * SDK's AnthropicBeta lists) and
 * https://platform.claude.com/docs/en/build-with-claude/context-editing (context-management-2025-06-27).
 */
const BETA_FIELDS: Record<string, readonly string[]> = {
  mcp_servers: ["mcp-client-2025-04-04", "mcp-client-2025-11-20", "mcp-client-2026-09-15"],
  context_management: ["context-management-2025-06-27"],
};

/** Unknown fields on the body. Source: https://platform.claude.com/docs/en/api/messages */
export const bodyFields: Rule = ({ body, endpoint, betas }) => {
  for (const key of Object.keys(body)) {
    if (BODY[endpoint].includes(key)) continue;
    if (Object.hasOwn(BETA_FIELDS, key) && BETA_FIELDS[key].some((beta) => betas.includes(beta))) continue;
    throw invalid(`${key}: Extra inputs are not permitted`);
  }
  checkCacheControl(body.cache_control, "");
};

/**
 * Unknown fields and type tags on message blocks, nested tool_result blocks and system blocks, and
 * the length of a tool call's name (MAX_CHARS). Source: https://platform.claude.com/docs/en/api/messages
 * (wording from the API, anthropics/claude-code#4378 and #2673).
 */
export const blockFields: Rule = ({ request }) => {
  for (const [i, message] of request.messages.entries()) {
    for (const key of Object.keys(message))
      if (key !== "role" && key !== "content") throw invalid(`messages.${i}.${key}: Extra inputs are not permitted`);
  }
  for (const at of eachBlock(request)) {
    checkBlock(at.block, at.path, BLOCKS);
    for (const nested of nestedBlocks(at)) checkBlock(nested.block, nested.path, NESTED);
  }
  for (const { block, path } of systemBlocks(request)) {
    if (path === "system") continue;
    if (!isObject(block) || block.type !== "text") throw tagError(path, (block as WireBlock)?.type, ["text"]);
    checkFields(block, { fields: BLOCKS.text!, path });
    checkCacheControl(block.cache_control, path);
  }
};

const TOOL_CHOICES: Record<string, Schema> = {
  auto: schema([], ["disable_parallel_tool_use"]),
  any: schema([], ["disable_parallel_tool_use"]),
  tool: schema(["name"], ["disable_parallel_tool_use"]),
  none: schema([]),
};
const THINKING: Record<string, Schema> = {
  adaptive: schema([], ["display"]),
  enabled: schema(["budget_tokens"], ["display"]),
  disabled: schema([]),
  between_tools: schema([]),
};

/**
 * Unknown fields on tool_choice, thinking, output_config and metadata (SDK ToolChoice,
 * ThinkingConfigParam, OutputConfig, Metadata), and tool_choice's value types. Sources:
 * https://platform.claude.com/docs/en/api/messages,
 * https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide (between_tools takes no
 * other field).
 */
export const configFields: Rule = ({ body }) => {
  const tagged = (value: unknown, name: string, table: Record<string, Schema>) => {
    if (value === undefined || value === null) return;
    if (!isObject(value)) throw invalid(`${name}: Input should be a valid dictionary or object to extract fields from`);
    if (!(String(value.type) in table)) throw tagError(name, value.type, Object.keys(table));
    checkFields(value, { fields: table[String(value.type)], path: `${name}.${String(value.type)}` });
  };
  tagged(body.tool_choice, "tool_choice", TOOL_CHOICES);
  // SDK ToolChoice*: `disable_parallel_tool_use?: boolean`, ToolChoiceTool `name: string`.
  if (isObject(body.tool_choice)) {
    const at = `tool_choice.${String(body.tool_choice.type)}`;
    checkValue(body.tool_choice.disable_parallel_tool_use, {
      typed: { kind: "boolean" },
      path: `${at}.disable_parallel_tool_use`,
    });
    if (body.tool_choice.type === "tool") checkValue(body.tool_choice.name, { typed: STRING, path: `${at}.name` });
  }
  tagged(body.thinking, "thinking", THINKING);
  if (isObject(body.output_config))
    checkFields(body.output_config, { fields: schema([], ["effort", "format"]), path: "output_config", ignore: [] });
  if (isObject(body.metadata))
    checkFields(body.metadata, { fields: schema([], ["user_id"]), path: "metadata", ignore: [] });
};
