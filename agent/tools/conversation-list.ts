// conversation_list (not core): the tenant's conversations, newest first, to find one to read.
import { z } from "zod";
import { isId } from "../../core/ids";
import type { CallScope, ToolDefinition, TranscriptAccess } from "./registry";

const input = z.strictObject({
  limit: z.number().int().min(1).max(50).optional(),
  before: z
    .string()
    .refine((v) => isId("conv", v), "not a conversation id")
    .optional(),
});

export const conversationList: ToolDefinition<z.infer<typeof input>, CallScope & TranscriptAccess> = {
  name: "conversation_list",
  core: false,
  capability: "conversation_list: list your conversations (titles, dates, sizes)",
  description:
    "List the user's conversations, newest first: id, title, dates and message count. Page with before = the last id of the previous page.",
  input,
  async run({ limit, before }, ctx) {
    const rows = await ctx.listConversations(limit ?? 20, before);
    if (!rows.length) return { content: "no conversations" };
    return {
      content: rows
        .map(
          (r) =>
            `- ${r.id} "${r.title}" created ${r.createdAt.slice(0, 10)}, updated ${r.updatedAt.slice(0, 10)}, ${r.messageCount} messages${r.id === ctx.conversationId ? " (this one)" : ""}`,
        )
        .join("\n"),
    };
  },
};
