// The name the model sees for a tool of a tenant's MCP server: mcp__<server>__<tool>. Anthropic
// tool names are ^[a-zA-Z0-9_-]{1,64}$, while an MCP tool's name may be longer or use other
// characters ("files/read", "ns.tool"); such a name keeps a readable, cleaned prefix and gets a
// hash of its original name as a suffix, so the mapping is deterministic and two different tools
// never share a name. The original name is kept next to it for the call. A server name holds no
// "__" and neither starts nor ends with "_", so the first "__" after "mcp__" always ends it and two
// servers never publish the same name (servers stored before that rule keep working).
import { sha256Hex } from "./ids";

export const MCP_SERVER_NAME = /^(?!_)(?!.*__)(?!.*_$)[a-z0-9_-]{1,24}$/;
export const MCP_SERVER_NAME_RULE =
  'lower-case letters, digits, _ and -, at most 24; no "__" and no _ at either end (mcp__<server>__<tool> must name one server)';
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;
const HASH_CHARS = 8;

export const mcpPrefix = (server: string) => `mcp__${server}__`;

/** The servers an MCP tool name may be of: mcp__a__b__c is a tool of "a" or (a server named before the rule) "a__b". */
export function mcpServersOfName(toolName: string): string[] {
  if (!toolName.startsWith("mcp__")) return [];
  const rest = toolName.slice("mcp__".length);
  const out: string[] = [];
  for (let at = rest.indexOf("__", 1); at > 0; at = rest.indexOf("__", at + 1)) out.push(rest.slice(0, at));
  return out;
}

export async function mcpToolName(server: string, tool: string): Promise<string> {
  const plain = `${mcpPrefix(server)}${tool}`;
  if (TOOL_NAME.test(plain)) return plain;
  const suffix = `_${(await sha256Hex(tool)).slice(0, HASH_CHARS)}`;
  const room = MAX - mcpPrefix(server).length - suffix.length;
  const cleaned = tool.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, Math.max(0, room));
  return `${mcpPrefix(server)}${cleaned}${suffix}`;
}
