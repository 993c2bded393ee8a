// memory_get: one memory note, fold episode or message in full, by id (from memory_search).
import { z } from "zod";
import { isId } from "../../core/ids";
import { renderMessageText } from "../../core/render";
import { wholeAt } from "../../core/text-cut";
import { page, READ_PAGE_CHARS, replacedNote } from "./conversation-read";
import type { CallScope, MemoryAccess, ToolDefinition, TranscriptAccess } from "./registry";

const input = z.strictObject({
  id: z
    .string()
    .refine(
      (v) => isId("mem", v) || isId("epi", v) || isId("msg", v),
      "not a note (mem_), episode (epi_) or message (msg_) id",
    ),
  offset: z.number().int().min(0).optional().describe("character offset of the page to read"),
});
type Input = z.infer<typeof input>;

export const memoryGet: ToolDefinition<Input, CallScope & MemoryAccess & TranscriptAccess> = {
  name: "memory_get",
  core: true,
  capability: "memory_get: read one note, episode or message in full",
  description:
    "Read one memory item in full by the id memory_search gave: a note (mem_…), an episode (epi_…) or a message (msg_…).",
  input,
  async run({ id, offset }, ctx) {
    if (id.startsWith("mem_")) {
      const note = await ctx.memory.getNote(id);
      if (!note) return { content: `no note ${id}`, isError: true };
      const tags = note.tags.length ? `, tags: ${note.tags.join(", ")}` : "";
      return {
        content: memoryPage(note.text, {
          offset: offset ?? 0,
          what: `note ${note.id}: ${note.title} (saved ${note.createdAt}, updated ${note.updatedAt}${tags})`,
          id,
        }),
      };
    }
    if (id.startsWith("epi_")) {
      const e = await ctx.memory.getEpisode(id);
      if (!e) return { content: `no episode ${id}`, isError: true };
      return {
        content: memoryPage(e.body, {
          offset: offset ?? 0,
          what: `episode ${e.id} of conversation ${e.conversationId}, messages 1-${e.throughSeq}, folded ${e.createdAt}`,
          id,
        }),
      };
    }
    // The index knows a message once its conversation's flush ran; one of this conversation is
    // read from its own store meanwhile, or while the index cannot answer.
    const conversationId = (await ctx.memory.conversationOfMessage(id).catch(() => null)) ?? ctx.conversationId;
    const found = await ctx.readConversation(conversationId, { messageId: id, limit: 1 });
    const m = found?.messages[0];
    if (!m) return { content: `no message ${id}`, isError: true };
    return {
      content: page(renderMessageText(m), {
        offset: offset ?? 0,
        what: `conversation ${conversationId}, message ${m.id} (seq ${m.seq}, ${m.role})${replacedNote(m)}`,
        args: { conversation_id: conversationId, message_id: m.id },
      }),
    };
  },
};

/**
 * One page of a note's or an episode's text, as conversation_read's `page` pages a message (an
 * episode's body may be up to 100,000 characters, and every tool result reading a stored thing is
 * bounded), its header naming the memory_get call that reads the next page.
 */
function memoryPage(text: string, { offset, what, id }: { offset: number; what: string; id: string }): string {
  // Never inside a surrogate pair: half of one would be a lone surrogate in every later request.
  const start = wholeAt(text, Math.min(offset, text.length));
  const end = wholeAt(text, Math.min(start + READ_PAGE_CHARS, text.length));
  const more = end < text.length ? `; next page: memory_get ${JSON.stringify({ id, offset: end })}` : "";
  return `[memory_get: ${what}; chars ${start}-${end} of ${text.length}${more}]\n${text.slice(start, end)}`;
}
