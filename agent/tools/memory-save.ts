// memory_save: the model keeps a durable note for the tenant (found later with memory_search).
import { z } from "zod";
import { nonBlankText } from "../../core/blank-text";
import { MAX_NOTES, NoteLimitReached } from "../../services/memory/notes";
import type { MemoryAccess, ToolDefinition } from "./registry";

const input = z.strictObject({
  // As POST /v1/memory takes it: a note's text reaches the model, never blank.
  text: nonBlankText(20_000, { trim: true }),
  title: z.string().trim().min(1).max(200).optional(),
  tags: z.array(z.string().trim().min(1).max(40)).max(20).optional(),
});
type Input = z.infer<typeof input>;

export const memorySave: ToolDefinition<Input, MemoryAccess> = {
  name: "memory_save",
  core: true,
  capability: "memory_save: keep a durable note across conversations",
  description:
    "Save a durable note to memory (a fact, preference or decision worth keeping across conversations). Found later with memory_search.",
  input,
  async run(args, ctx) {
    try {
      const note = await ctx.memory.saveNote(args);
      return { content: `saved note ${note.id}: ${note.title}` };
    } catch (err) {
      // At the cap the model is told what to do instead, and its turn goes on.
      if (err instanceof NoteLimitReached)
        return {
          content: `not saved: memory is full (the tenant has ${MAX_NOTES} notes, the most it may keep). Update an existing note with memory_update, or remove one that no longer matters with memory_forget, then save again.`,
          isError: true,
        };
      throw err;
    }
  },
};
