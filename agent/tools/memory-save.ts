// memory_save: the model keeps a durable note for the tenant (found later with memory_search).
import { z } from "zod";
import { nonBlankText } from "../../core/blank-text";
import { isId } from "../../core/ids";
import type { StoredMessage } from "../../core/types";
import { MAX_NOTES, NoteLimitReached } from "../../services/memory/notes";
import { noteTags } from "../../services/memory/note-tags";
import type { MemoryAccess, ToolDefinition } from "./registry";

const input = z.strictObject({
  // As POST /v1/memory takes it: a note's text reaches the model, never blank.
  text: nonBlankText(20_000, { trim: true }),
  title: z.string().trim().min(1).max(200).optional(),
  tags: noteTags.optional(),
});
type Input = z.infer<typeof input>;

/** How a result of memory_save that kept a note begins (the note's id follows): notesSavedIn reads it back. */
const SAVED = "saved note";

/**
 * The ids of the notes memory_save kept in these messages (a turn's, an exchange's): the results of
 * its calls, told by the call's name, so no other tool's result can name a note to forget. A refused
 * turn's notes and a regenerated exchange's go with it (services/memory/notes.ts forgetNotes).
 */
export function notesSavedIn(messages: readonly StoredMessage[]): string[] {
  const calls = new Set<string>();
  const ids: string[] = [];
  for (const m of messages)
    for (const b of m.content) {
      if (b.type === "tool_use" && b.name === memorySave.name) calls.add(b.id);
      if (b.type !== "tool_result" || !calls.has(b.tool_use_id) || b.is_error) continue;
      const text = typeof b.content === "string" ? b.content : b.content.find((c) => c.type === "text")?.text;
      const id = text?.startsWith(`${SAVED} `) ? text.slice(SAVED.length + 1).split(":")[0] : undefined;
      if (isId("mem", id)) ids.push(id);
    }
  return ids;
}

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
      return { content: `${SAVED} ${note.id}: ${note.title}` };
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
