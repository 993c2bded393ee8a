// memory_update and memory_forget (not core): edit or delete a saved note.
import { z } from "zod";
import { nonBlankText } from "../../core/blank-text";
import { isId } from "../../core/ids";
import { noteTags } from "../../services/memory/note-tags";
import type { MemoryAccess, ToolDefinition } from "./registry";

const noteId = z.string().refine((v) => isId("mem", v), "not a note id (mem_…)");

const updateInput = z.strictObject({
  id: noteId,
  text: nonBlankText(20_000, { trim: true }).optional(),
  title: z.string().trim().min(1).max(200).optional(),
  tags: noteTags.optional(),
});

export const memoryUpdate: ToolDefinition<z.infer<typeof updateInput>, MemoryAccess> = {
  name: "memory_update",
  core: false,
  capability: "memory_update: correct a saved note",
  description: "Change a saved note's text, title or tags (by its mem_ id).",
  input: updateInput,
  async run({ id, ...change }, ctx) {
    // Nothing to change changes nothing: a bare touch would mark the note edited (kept by forgetNotes).
    if (change.text === undefined && change.title === undefined && change.tags === undefined)
      return { content: "nothing to change: give text, title or tags (or more than one) with the id", isError: true };
    const note = await ctx.memory.updateNote(id, change);
    return note ? { content: `updated note ${note.id}: ${note.title}` } : { content: `no note ${id}`, isError: true };
  },
};

export const memoryForget: ToolDefinition<{ id: string }, MemoryAccess> = {
  name: "memory_forget",
  core: false,
  capability: "memory_forget: delete a saved note",
  description: "Delete a saved note (by its mem_ id) when the user asks to forget it.",
  input: z.strictObject({ id: noteId }),
  async run({ id }, ctx) {
    return (await ctx.memory.deleteNote(id))
      ? { content: `deleted note ${id}` }
      : { content: `no note ${id}`, isError: true };
  },
};
