import { conversationRead } from "./conversation-read";
import { ToolRegistry } from "./registry";

/** The registry every turn uses. Built once per isolate; tools are stateless. */
export const toolRegistry = new ToolRegistry().register(conversationRead);

export const capabilityIndex = (): string[] => [
  "conversation_read: read any stored message of your conversations, byte for byte, paged",
];
