import { agentDelegate } from "./agent-delegate";
import { documentRead, fileRead, imageView, pdfInfo, pdfRead, spreadsheetRead } from "./attachment-tools";
import { conversationList } from "./conversation-list";
import { conversationRead } from "./conversation-read";
import { memoryForget, memoryUpdate } from "./memory-edit";
import { memoryGet } from "./memory-get";
import { memorySave } from "./memory-save";
import { memorySearch } from "./memory-search";
import { pdfSearch } from "./pdf-search";
import { ToolRegistry } from "./registry";
import { toolActivate, toolSearch } from "./tool-discovery";
// Tenant tool sources register themselves with agent/tools/external.ts when imported.
import "./mcp-tools";
// Registers the tenant's registered tools (HTTP, client) as a tool source of every turn.
import "./registered-tools";

/** The registry every turn uses. Built once per isolate; tools are stateless. */
export const toolRegistry = new ToolRegistry();
toolRegistry
  .register(conversationRead)
  .register(memorySearch)
  .register(memoryGet)
  .register(memorySave)
  .register(toolSearch(toolRegistry))
  .register(toolActivate(toolRegistry))
  .register(conversationList)
  .register(memoryUpdate)
  .register(memoryForget)
  .register(fileRead)
  .register(pdfInfo)
  .register(pdfRead)
  .register(pdfSearch)
  .register(imageView)
  .register(spreadsheetRead)
  .register(documentRead)
  .register(agentDelegate);
