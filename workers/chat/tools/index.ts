import { conversationRead } from "./conversation-read";
import { memorySearch } from "./memory-search";
import { ToolRegistry } from "./registry";

/** The registry every turn uses. Built once per isolate; tools are stateless. */
export const toolRegistry = new ToolRegistry().register(conversationRead).register(memorySearch);

export const capabilityIndex = (): string[] => [
  "conversation_read: read any stored message of your conversations, byte for byte, paged",
  "memory_search: find stored messages by words or exact identifiers, across all your conversations",
];
