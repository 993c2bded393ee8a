// A note's tags: one schema for POST/PATCH /v1/memory, memory_save and memory_update. Tags ride
// listings, search and every prompt's <memory_map>, so each follows a title's rule (visibleName,
// core/visible-text.ts): something visible, no control characters, line separators or bidi
// overrides; trimmed, 1 to 40 characters. A repeated tag is refused, not dropped.
import { z } from "zod";
import { visibleText } from "../../core/visible-text";

const noteTag = visibleText(40);

export const noteTags = z
  .array(noteTag)
  .max(20)
  .refine((tags) => new Set(tags).size === tags.length, "no tag may repeat");
