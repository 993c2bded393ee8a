// The `mcp` tool source: every tool of the MCP servers a conversation sees (the tenant's, and its
// project's), from each server's cached list in D1 — no server is contacted to build a turn. A
// call reaches the server through services/mcp/call.ts. Tools are never core: the model finds them
// with tool_search and adds them with tool_activate, and the index shows one line per server.
import { z } from "zod";
import { mcpPrefix } from "../../core/mcp-names";
import { INPUT_SCHEMA_MAX_BYTES } from "../../core/tenant-tool-rules";
import { modelToolSchema, originalArguments, withSchemaNote, type ModelToolSchema } from "../../core/tool-schema";
import { callMcpTool } from "../../services/mcp/call";
import { carriableMcpName } from "../../services/mcp/listing";
import { cachedTools, mcpServersInScope, type McpServerRow, type McpToolEntry } from "../../services/mcp/servers";
import type { ToolScope, ToolSource } from "./external";
import type { ToolDefinition } from "./registry";

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function mcpToolDefinition(
  /** projectId: the conversation's project; none given is none (a conversation of no project). */
  scope: Pick<ToolScope, "env" | "tenantId"> & Partial<Pick<ToolScope, "projectId">>,
  server: McpServerRow,
  tool: McpToolEntry,
): ToolDefinition<Record<string, unknown>> {
  const summary = oneLine(tool.description, 160);
  // The server's schema as the Messages API takes it: a top-level union (which the API refuses on
  // every request carrying the tool) is flattened, and the combinations it allowed are told in the
  // description; argument names the API refuses are renamed, and named back in the call. Done
  // here, not at listing, so lists cached before the rule are served right too.
  const { schema, note, renamed } = cappedToolSchema(tool.inputSchema);
  return {
    name: tool.name,
    shortName: tool.mcpName,
    indexGroup: `${mcpPrefix(server.name)}* (MCP server)`,
    description: withSchemaNote(
      `${oneLine(tool.description, 1000)} (tool "${tool.mcpName}" of MCP server "${server.name}")`,
      note,
    ),
    capability: `${tool.name}: ${summary}`,
    core: false,
    input: z.record(z.string(), z.unknown()),
    jsonSchema: schema,
    run: (input) =>
      callMcpTool(scope.env, {
        tenantId: scope.tenantId,
        serverId: server.id,
        mcpName: tool.mcpName,
        args: originalArguments(input, renamed),
        // A server renamed or moved to another project since is no longer this conversation's; one
        // moved between tenant-wide and the conversation's own project still is.
        offered: { toolName: tool.name, serverName: server.name, projectId: scope.projectId ?? null },
      }),
  };
}

/**
 * modelToolSchema, for a schema within INPUT_SCHEMA_MAX_BYTES (an HTTP or client tool's cap): a
 * larger one would ride every request once the tool is active (a 1 MB schema, ~300k input tokens
 * each time), so it is offered without arguments, as a schema that cannot be read is, saying why.
 * The cap holds for what is sent, too: the rewritten schema and its note in the description (a
 * union's rewrite can be larger than the schema the server declared).
 */
function cappedToolSchema(declared: unknown): ModelToolSchema {
  const declaredBytes = jsonBytes(declared);
  if (declaredBytes > INPUT_SCHEMA_MAX_BYTES) return offeredWithoutArguments(`is ${declaredBytes} bytes`);
  const sendable = modelToolSchema(declared);
  const sentBytes = jsonBytes(sendable.schema) + new TextEncoder().encode(sendable.note ?? "").byteLength;
  if (sentBytes > INPUT_SCHEMA_MAX_BYTES)
    return offeredWithoutArguments(`is ${sentBytes} bytes as sent (rewritten for the API, with its note)`);
  return sendable;
}

const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength;

const offeredWithoutArguments = (size: string): ModelToolSchema => ({
  schema: { type: "object", properties: {} },
  note: `Its input schema ${size}, more than the ${INPUT_SCHEMA_MAX_BYTES} a tool's schema may take, so it is offered without arguments.`,
});

/** The `mcp` kind of tenant tool (listed in agent/tools/index.ts). */
export const mcpToolSource: ToolSource = {
  kind: "mcp",
  async load(scope) {
    const servers = await mcpServersInScope(scope.env.DB, scope.tenantId, scope.projectId);
    // A name no request could carry (a list cached before listing refused such names) is left out.
    return servers.flatMap((s) =>
      cachedTools(s)
        .filter((t) => carriableMcpName(t.mcpName))
        .map((t) => mcpToolDefinition(scope, s, t)),
    );
  },
};
