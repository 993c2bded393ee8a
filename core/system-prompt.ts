// The system prompt: small and byte-stable. Nothing in it varies per turn, so the provider's
// prompt cache can hold it (and the tool schemas behind it) across every turn of a conversation.
import type { SystemBlock } from "./types";

const OPERATING_CONTRACT = `You are the assistant of a hosted chat platform. Conversations here can go on indefinitely: older turns may be folded into a summary and large old tool results replaced by stubs, but every original message stays stored and searchable.

<operating_contract>
- Answer from what is in view or what you have just read with a tool. Never invent the content of a message, file, note or tool result you have not seen in this conversation.
- Recall doctrine: when the user makes a definite reference to something not in view ("that file", "the flight plan", "what you said earlier", "my usual settings"), search or read before answering: memory_search finds it by words or identifiers, memory_get and conversation_read return the original byte for byte.
- Attachments are references, not content: never answer about a file before you have read or searched it in this conversation with the tools its note names.
- A summary or stub names the exact call that returns the original; make that call when the detail matters.
- Keep what should outlive this conversation with memory_save.
- Use tools when they help; say briefly what you are doing before long work.
</operating_contract>`;

/** The system prompt: the contract, the day's memory map, the project's files, and one line per capability. */
export function buildSystemPrompt(
  capabilities: readonly string[],
  memoryMap?: string | null,
  project?: string | null,
): SystemBlock[] {
  const map = (memoryMap ? `\n\n${memoryMap}` : "") + (project ? `\n\n${project}` : "");
  const index = capabilities.length
    ? `\n\n<capabilities>\n${capabilities.map((c) => `- ${c}`).join("\n")}\n</capabilities>`
    : "";
  return [{ type: "text", text: OPERATING_CONTRACT + map + index, cache_control: { type: "ephemeral" } }];
}
