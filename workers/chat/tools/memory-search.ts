// memory_search: the cortex (BM25 over every stored message of the tenant, folded or not) as a
// tool. Each hit names the exact conversation_read call that returns the original.
import { z } from "zod";
import type { ToolDefinition } from "./registry";

const input = z.strictObject({
  query: z.string().trim().min(1).max(500),
  limit: z.number().int().min(1).max(20).optional(),
});
type Input = z.infer<typeof input>;

export const memorySearch: ToolDefinition<Input> = {
  name: "memory_search",
  core: true,
  description:
    "Search every stored message of your conversations (including turns folded into a summary) by words, names, ids, file names or numbers. " +
    "Returns ranked snippets; each names the conversation_read call that returns the full original.",
  input,
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "words or exact identifiers to find" },
      limit: { type: "integer", minimum: 1, maximum: 20, description: "default 8" },
    },
    required: ["query"],
    additionalProperties: false,
  },
  async run(args, ctx) {
    const hits = await ctx.search(args.query, args.limit ?? 8);
    if (!hits.length) return { content: `no stored message matches "${args.query}"` };
    const lines = hits.map((h, i) => {
      const where = h.conversationId === ctx.conversationId ? "this conversation" : `conversation ${h.conversationId}`;
      const read = JSON.stringify({ conversation_id: h.conversationId, message_id: h.messageId });
      return `${i + 1}. ${where}, seq ${h.seq} (${h.role}, ${h.createdAt}): ${h.snippet}\n   full text: conversation_read ${read}`;
    });
    return { content: `${hits.length} matches for "${args.query}":\n${lines.join("\n")}` };
  },
};
