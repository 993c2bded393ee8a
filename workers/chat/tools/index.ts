import { conversationRead } from "./conversation-read";
import { memoryGet } from "./memory-get";
import { memorySave } from "./memory-save";
import { memorySearch } from "./memory-search";
import { ToolRegistry } from "./registry";

/** The registry every turn uses. Built once per isolate; tools are stateless. */
export const toolRegistry = new ToolRegistry().register(conversationRead).register(memorySearch).register(memoryGet).register(memorySave);

export const capabilityIndex = (): string[] => [
  "conversation_read: read any stored message of your conversations, byte for byte, paged",
  "memory_search / memory_get: find and read stored messages, notes and episodes by words or exact identifiers",
  "memory_save: keep a durable note across conversations",
];
