// The rules a tenant's registered tool must meet, shared by the registration routes and the
// caller: names that cannot pass for a built-in or an MCP tool, a bounded input schema, and the
// HTTP call's limits. A tool's result is kept whole (R2 record and the conversation's SQLite
// index, whose rows hold at most 2 MB), so the response cap stays well inside one row.
import { schemaProblem } from "./tool-schema";

/**
 * The Messages API's own pattern is now ^[a-zA-Z0-9_-]{1,128}$ (its error text, 2025-08 on), while
 * its tool docs still say {1,64}; 64 passes both, and MCP names (core/mcp-names.ts) and client
 * tools (core/client-tools.ts) keep the same bound.
 */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/**
 * The server tools' names (core/settings.ts SERVER_TOOLS, plus code execution's): a conversation
 * that opts into one carries it beside its other tools, and the API refuses two tools of one name.
 */
export const SERVER_TOOL_NAMES: readonly string[] = ["web_search", "web_fetch", "code_execution"];
/** MCP servers' tools are named mcp__<server>__<tool>; a registered tool may not look like one. */
export const MCP_PREFIX = "mcp__";
export const TOOL_KINDS = ["http", "client"] as const;
export type TenantToolKind = (typeof TOOL_KINDS)[number];

export const DESCRIPTION_MAX_CHARS = 2_000;
/** The schema rides every request once the tool is active: keep it a schema, not a document. */
export const INPUT_SCHEMA_MAX_BYTES = 16 * 1024;

export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_TIMEOUT_MS = 60_000;
export const MIN_TIMEOUT_MS = 100;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/**
 * One message from an MCP server (a JSON body, or one event of an event stream) is read up to this
 * many bytes and no further: room for an image at the Messages API's limit (5 MB of base64) and
 * the result's text, and a bound on what one answer can make the conversation object hold.
 */
export const MCP_MAX_MESSAGE_BYTES = 6 * 1024 * 1024;
/** The text of one MCP tool result (UTF-8), kept to an HTTP tool's cap. */
export const MCP_MAX_RESULT_TEXT_BYTES = MAX_RESPONSE_BYTES;
export const MAX_RETRIES = 3;
export const MAX_HEADERS = 20;
export const HEADER_VALUE_MAX_CHARS = 4_096;
/**
 * What a header value may hold: tab, space and visible ASCII. RFC 9110 allows bytes 0x80–0xFF too
 * (fetch refuses a character past 0xFF), but workerd sends U+0080–U+00FF as their UTF-8 bytes, so
 * an echo of the value would not match it as given (the transcript's withholding would miss it),
 * and its runtime warning prints the whole value. A value stored before this rule is kept as is.
 */
export const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
// It opens with the rule's words from before U+0080–U+00FF were refused too, for callers matching them.
export const HEADER_VALUE_RULE =
  "no line breaks, control characters or characters past U+00FF (an HTTP header value), nor from U+0080 on: visible ASCII, space and tab only";
/**
 * The hop-by-hop headers (RFC 9110 7.6.1 and the older lists, proxy-connection included): they
 * speak of one connection, not of the request, so a value from a tenant changes how the call is
 * made rather than reaching the endpoint. workerd acts on an `Upgrade`: the POST goes out as a
 * bodiless websocket handshake GET, and the endpoint never sees the input.
 */
const HOP_BY_HOP_HEADERS = [
  "connection",
  "upgrade",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
];

/**
 * Headers the platform sets itself on every call, and those that control the connection; a tool
 * may not set them. Matched in lower case (header names are case-insensitive).
 */
export const RESERVED_HEADERS = [
  "content-type",
  "content-length",
  "host",
  "x-tool-name",
  "x-conversation-id",
  "x-turn-id",
  "x-tool-call-id",
  "idempotency-key",
  ...HOP_BY_HOP_HEADERS,
];

/**
 * Headers the MCP transport sets itself on every request to a server (the body's type and length,
 * the host, what it accepts, the session, the protocol version, an SSE resume), and those that
 * control the connection: an MCP server's auth header may not be one of them. Lower case.
 */
export const MCP_RESERVED_HEADERS = [
  "content-type",
  "content-length",
  "host",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  ...HOP_BY_HOP_HEADERS,
];

/** The keywords a tool's top-level input schema may use (a typo is refused, not silently ignored). */
const SCHEMA_KEYWORDS = new Set([
  "$schema",
  "$id",
  "$defs",
  "definitions",
  "title",
  "description",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "dependentRequired",
  "dependentSchemas",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  "examples",
  "default",
]);

/** Why `schema` cannot be a tool's input schema, or null when it can (what the Messages API refuses: core/tool-schema.ts). */
export function inputSchemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return "must be a JSON Schema object";
  const s = schema as Record<string, unknown>;
  const unknown = Object.keys(s).find((k) => !SCHEMA_KEYWORDS.has(k));
  if (unknown !== undefined) return `unknown JSON Schema keyword "${unknown.slice(0, 40)}" at the top level`;
  const refused = schemaProblem(s);
  if (refused) return refused;
  const bytes = new TextEncoder().encode(JSON.stringify(schema)).length;
  if (bytes > INPUT_SCHEMA_MAX_BYTES) return `larger than ${INPUT_SCHEMA_MAX_BYTES} bytes (${bytes})`;
  return null;
}
