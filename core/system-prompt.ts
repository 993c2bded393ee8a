// The system prompt: small and byte-stable. Nothing in it varies per turn, so the provider's
// prompt cache can hold it (and the tool schemas behind it) across every turn of a conversation.
import { sha256Hex } from "./ids";
import type { SystemBlock } from "./types";

/**
 * The line every cached request the platform sends for a tenant opens its system prompt with.
 *
 * All tenants share one provider account, and the provider's prompt cache is shared across an
 * account's requests: a prefix one tenant's request wrote is read by any request that starts with
 * the same bytes. Before this line nothing told two tenants' requests apart up to their first
 * message (the tools and the contract are the same for everyone, and a new tenant's memory map
 * is too), so a tenant could learn from its own usage (cache_read_input_tokens, and the cost)
 * whether another tenant had sent a given text. With this line first in `system`, every cache
 * entry belongs to one tenant: the tool schemas before it (a tenant's own and a turn's client tools
 * among them) carry no breakpoint, so no entry ends among them.
 *
 * The line is a digest of the tenant id, not the id: it only has to differ between tenants, never
 * to be secret (a tenant cannot choose what the platform writes at the head of its requests, so
 * knowing another tenant's line gains it nothing), and the digest keeps the internal id out of
 * the model's context and out of the tenant's /replay view. 128 bits, so no two tenants share one.
 * It depends on the tenant alone, so it is byte-stable across a conversation and across a tenant's
 * conversations: the contract is cached once per tenant instead of once for all.
 */
export interface CacheScope {
  readonly line: string;
}

export async function cacheScopeFor(tenantId: string): Promise<CacheScope> {
  const digest = await sha256Hex(`prompt-cache-scope:${tenantId}`);
  return { line: `<cache_scope>${digest.slice(0, 32)}</cache_scope>` };
}

/** A system text opened with the tenant's scope line (what the sub-agent's request carries). */
export const scopedSystemText = (scope: CacheScope, text: string): string => `${scope.line}\n\n${text}`;

const OPERATING_CONTRACT = `You are the assistant of a hosted chat platform. Conversations here can go on indefinitely: older turns may be folded into a summary and large old tool results replaced by stubs, but every original message stays stored and searchable.

<operating_contract>
- Answer from what is in view or what you have just read with a tool. Never invent the content of a message, file, note or tool result you have not seen in this conversation.
- Recall doctrine: when the user makes a definite reference to something not in view ("that file", "the flight plan", "what you said earlier", "my usual settings"), search or read before answering: memory_search finds it by words or identifiers, memory_get and conversation_read return the original byte for byte.
- Attachments are references, not content: never answer about a file before you have read or searched it in this conversation with the tools its note names.
- A summary or stub names the exact call that returns the original; make that call when the detail matters.
- Keep what should outlive this conversation with memory_save.
- Use tools when they help; say briefly what you are doing before long work.
</operating_contract>`;

/**
 * The system prompt: the tenant's scope line, the contract, the day's memory map, the project's
 * files, and one line per capability.
 */
export function buildSystemPrompt(prompt: {
  scope: CacheScope;
  capabilities: readonly string[];
  memoryMap?: string | null;
  project?: string | null;
}): SystemBlock[] {
  const { scope, capabilities, memoryMap, project } = prompt;
  const map = (memoryMap ? `\n\n${memoryMap}` : "") + (project ? `\n\n${project}` : "");
  const index = capabilities.length
    ? `\n\n<capabilities>\n${capabilities.map((c) => `- ${c}`).join("\n")}\n</capabilities>`
    : "";
  const text = scopedSystemText(scope, OPERATING_CONTRACT + map + index);
  return [{ type: "text", text, cache_control: { type: "ephemeral" } }];
}
