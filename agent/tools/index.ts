// Every tool source of a turn, in one place: the built-in tools (builtInTools) and the kinds of
// tenant tool (TENANT_TOOL_SOURCES). Nothing registers itself on import; a new tool or kind is
// added to one of these two lists, and its place in the list is its place in the registry.
import { agentDelegate } from "./agent-delegate";
import { documentRead, fileRead, imageView, pdfInfo, pdfRead, spreadsheetRead } from "./attachment-tools";
import { conversationList } from "./conversation-list";
import { conversationRead } from "./conversation-read";
import type { ToolSource } from "./external";
import { mcpToolSource } from "./mcp-tools";
import { memoryForget, memoryUpdate } from "./memory-edit";
import { memoryGet } from "./memory-get";
import { memorySave } from "./memory-save";
import { memorySearch } from "./memory-search";
import { pdfSearch } from "./pdf-search";
import { registeredToolSource } from "./registered-tools";
import { type ToolDefinition, ToolRegistry } from "./registry";
import { toolActivate, toolSearch } from "./tool-discovery";

/**
 * The built-in tools in registration order. `registry` is the one they join: tool_search and
 * tool_activate fall back to it when a call carries no turn registry.
 */
export function builtInTools(registry: ToolRegistry): ToolDefinition<unknown>[] {
  return [
    conversationRead,
    memorySearch,
    memoryGet,
    memorySave,
    toolSearch(registry),
    toolActivate(registry),
    conversationList,
    memoryUpdate,
    memoryForget,
    fileRead,
    pdfInfo,
    pdfRead,
    pdfSearch,
    imageView,
    spreadsheetRead,
    documentRead,
    agentDelegate,
  ];
}

/**
 * The kinds of tenant tool, in the order their tools join a turn (after the built-in ones); each
 * turn reads them through external.ts's tenantTools.
 */
export const tenantToolSources: ToolSource[] = [mcpToolSource, registeredToolSource];

/** A registry holding the built-in tools. */
export function createToolRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of builtInTools(registry)) registry.register(tool);
  return registry;
}

/** The registry every turn uses. Built once per isolate; tools are stateless. */
export const toolRegistry = createToolRegistry();
