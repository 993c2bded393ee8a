// What a client may send as a turn, shared by the HTTP route and websocket frames so both
// accept and reject exactly the same input. What is stored here is replayed on every later
// request, so anything the Messages API refuses (blank text, an image over its limits) is a 400
// now, naming the field, rather than a stored message that fails every later turn.
import { z } from "zod";
import { nonBlankText } from "./blank-text";
import { turnToolsSchema } from "./client-tools";
import { imageProblems, imageSourceSchema, imagesOf } from "./image-input";
import type { ContentBlock } from "./types";

export const MAX_TURN_TEXT_CHARS = 1_000_000;

const textBlock = z.strictObject({ type: z.literal("text"), text: nonBlankText(MAX_TURN_TEXT_CHARS) });
const imageBlock = z.strictObject({ type: z.literal("image"), source: imageSourceSchema });

export const turnContentSchema = z.union([
  nonBlankText(MAX_TURN_TEXT_CHARS),
  z
    .array(z.discriminatedUnion("type", [textBlock, imageBlock]))
    .min(1)
    .max(50)
    .superRefine((blocks, ctx) => {
      for (const { path, problem } of imageProblems(imagesOf(blocks)))
        ctx.addIssue({ code: "custom", path, message: problem });
    }),
]);

export const turnBodySchema = z.strictObject({
  content: turnContentSchema,
  attachments: z.array(z.string().max(64)).max(20).optional(),
  /** Client tools for this turn only: calling one pauses the turn for the client's result. */
  tools: turnToolsSchema.optional(),
});

/**
 * A conversation's turn (POST /v1/conversations/:id/messages, the websocket `send` frame) may be a
 * regenerate instead: `{regenerate: true}` runs the last prompt again and supersedes the reply it
 * replaces. It carries no content and no attachments (the prompt's own are used).
 */
export const regenerateField = z.literal(true).optional().meta({
  description:
    "Run the last prompt again, replacing its reply (which stays in the transcript, marked superseded); no content or attachments with it.",
});

/** The rule both entrances share: content, or regenerate without content and attachments. */
export function regenerateProblems(
  body: { content?: unknown; attachments?: unknown; regenerate?: true },
  ctx: z.RefinementCtx,
): void {
  if (body.regenerate) {
    if (body.content !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["content"],
        message: "not allowed with regenerate (the last prompt is run again)",
      });
    if (body.attachments !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["attachments"],
        message: "not allowed with regenerate (the last prompt's are used)",
      });
  } else if (body.content === undefined)
    ctx.addIssue({ code: "custom", path: ["content"], message: "required (or regenerate: true)" });
}

export const conversationTurnBodySchema = turnBodySchema
  .extend({ content: turnContentSchema.optional(), regenerate: regenerateField })
  .superRefine(regenerateProblems);

export function toContentBlocks(content: z.infer<typeof turnContentSchema>): ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : (content as ContentBlock[]);
}
