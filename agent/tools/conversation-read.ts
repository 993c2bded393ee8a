// conversation_read: any message of the tenant's conversations, folded or not, byte for byte.
// Output is paged by character offset so a huge message can be read whole, one page at a time;
// every page says which call returns the next one. A range is read in bounded bites as well (at
// most 50 messages, and no more bytes than one RPC may carry): a range cut short names the call
// that reads the rest.
//
// One block (message_id and block) that holds images (an image a user sent, a tool result with a
// screenshot) returns them too, as images, after its first page: a stale result's stub names this
// call for its images, and running the tool again would show new ones, not the originals. Whatever
// the request cannot carry is left out at request time (core/request-limits.ts).
import { z } from "zod";
import { isId } from "../../core/ids";
import { blockText, renderMessageText } from "../../core/render";
import { wholeAt } from "../../core/text-cut";
import type { ContentBlock, ImageBlock } from "../../core/types";
import type { CallScope, ReadMessages, ToolDefinition, ToolOutput, TranscriptAccess } from "./registry";

export const READ_PAGE_CHARS = 40_000;
const MAX_RANGE_MESSAGES = 50;

const input = z.strictObject({
  conversation_id: z
    .string()
    .refine((v) => isId("conv", v), "not a conversation id")
    .optional()
    .describe("defaults to the current conversation"),
  message_id: z
    .string()
    .refine((v) => isId("msg", v), "not a message id")
    .optional(),
  from_seq: z.number().int().min(1).optional(),
  to_seq: z.number().int().min(1).optional(),
  block: z.number().int().min(0).optional().describe("index of one content block of message_id"),
  offset: z.number().int().min(0).optional().describe("character offset of the page to read"),
});
type Input = z.infer<typeof input>;

export const conversationRead: ToolDefinition<Input, CallScope & TranscriptAccess> = {
  name: "conversation_read",
  core: true,
  capability: "conversation_read: any stored message of your conversations, byte for byte, paged",
  description:
    "Read stored messages of any of this tenant's conversations byte for byte, including turns folded into a summary or replaced by stubs. " +
    "Give message_id for one message (block selects one content block: its images come back as images), or from_seq/to_seq for a range. Long output is paged: pass the offset the previous page names.",
  input,
  async run(args, ctx) {
    const conversationId = args.conversation_id ?? ctx.conversationId;
    if (args.block !== undefined && !args.message_id) return { content: "block needs message_id", isError: true };
    if (args.message_id && (args.from_seq !== undefined || args.to_seq !== undefined))
      return { content: "give message_id or from_seq/to_seq, not both", isError: true };
    if (args.from_seq !== undefined && args.to_seq !== undefined && args.to_seq < args.from_seq)
      return { content: "to_seq must be >= from_seq", isError: true };
    const fromSeq = args.message_id ? undefined : (args.from_seq ?? 1);
    const toSeq = args.message_id
      ? undefined
      : Math.min(args.to_seq ?? fromSeq! + MAX_RANGE_MESSAGES - 1, fromSeq! + MAX_RANGE_MESSAGES - 1);
    const found = await ctx.readConversation(conversationId, {
      messageId: args.message_id,
      fromSeq,
      toSeq,
      limit: MAX_RANGE_MESSAGES,
    });
    if (!found) return { content: `no conversation ${conversationId}`, isError: true };
    if (!found.messages.length)
      return {
        content: args.message_id
          ? `no message ${args.message_id} in conversation ${conversationId}`
          : `no messages in that range (the conversation has ${found.messageCount})`,
        isError: true,
      };

    let text: string;
    let what: string;
    let images: ImageBlock[] = [];
    // A range is fixed by its first page: the next pages name its last seq as to_seq, so the
    // messages written since (this very call's among them) never shift the offsets.
    let range: { from_seq?: number; to_seq?: number } = {};
    if (args.message_id) {
      const m = found.messages[0];
      if (args.block !== undefined) {
        const block = m.content[args.block];
        if (!block) return { content: `message ${m.id} has ${m.content.length} blocks`, isError: true };
        text = blockText(block);
        images = imagesOf(block);
        what = `message ${m.id} (seq ${m.seq}, ${m.role}) block ${args.block}${replacedNote(m)}`;
      } else {
        text = renderMessageText(m);
        what = `message ${m.id} (seq ${m.seq}, ${m.role})${replacedNote(m)}`;
      }
    } else {
      text = found.messages.map(renderRangeEntry).join("\n\n");
      const last = found.messages[found.messages.length - 1];
      // What was asked: an explicit to_seq beyond the 50 a call reads, or the default 50.
      const askedTo = args.to_seq ?? toSeq!;
      const restFrom = found.next ?? (last.seq < Math.min(askedTo, found.messageCount) ? last.seq + 1 : undefined);
      const rest = restFrom
        ? `, cut short at seq ${last.seq} (the rest: conversation_read ${JSON.stringify({ conversation_id: conversationId, from_seq: restFrom, to_seq: askedTo })})`
        : "";
      what = `messages seq ${found.messages[0].seq}-${last.seq} of ${found.messageCount}${rest}`;
      // A range cut short keeps the asked to_seq on its next pages: it is cut at the same seq each
      // time (the messages up to the cut never change), and every page names the rest.
      range = { from_seq: fromSeq, to_seq: restFrom ? askedTo : last.seq };
    }
    const offset = args.offset ?? 0;
    // The images ride the first page only: a later page of the same block does not carry them again.
    const shown = offset === 0 ? images : [];
    const also = images.length ? `; ${imagesNote(images.length, shown.length > 0)}` : "";
    const content = page(text, {
      offset,
      what: `conversation ${conversationId}, ${what}${also}`,
      args: {
        ...args,
        conversation_id: conversationId,
        ...range,
      },
    });
    return withImages(content, shown);
  },
};

/** The images a block holds, as stored (their bytes, never a cache mark): an image block, or a tool result's. */
function imagesOf(block: ContentBlock): ImageBlock[] {
  const parts = block.type === "image" ? [block] : block.type === "tool_result" ? block.content : [];
  if (typeof parts === "string") return [];
  return parts.flatMap((c): ImageBlock[] => (c.type === "image" ? [{ type: "image", source: c.source }] : []));
}

const imagesNote = (n: number, shown: boolean): string => {
  const [what, s] = n === 1 ? ["its image", "s"] : [`its ${n} images`, ""];
  return shown ? `${what} follow${s} this page` : `${what} come${s} with the first page (offset 0)`;
};

/** The page, and after it the block's original images (the text still labels each one where it stood). */
function withImages(content: string, images: ImageBlock[]): ToolOutput {
  if (!images.length) return { content };
  return { content, blocks: [{ type: "text", text: content }, ...images] };
}

function renderRangeEntry(m: ReadMessages["messages"][number]): string {
  return `--- seq ${m.seq} ${m.role} ${m.id} ${m.createdAt}${replacedNote(m)}\n${renderMessageText(m)}`;
}

/** How a message a regenerate replaced is marked wherever it is read back: never taken as current. */
export const replacedNote = (m: { supersededBy?: string }): string =>
  m.supersededBy ? ` (replaced by a regenerate: superseded by ${m.supersededBy})` : "";

/** One page of `text` behind a header; the header names the call for the next page. */
export function page(
  text: string,
  { offset, what, args }: { offset: number; what: string; args: Record<string, unknown> },
): string {
  // Never inside a surrogate pair: half of one would be a lone surrogate in every later request.
  const start = wholeAt(text, Math.min(offset, text.length));
  const end = wholeAt(text, Math.min(start + READ_PAGE_CHARS, text.length));
  const more = end < text.length ? `; next page: conversation_read ${JSON.stringify({ ...args, offset: end })}` : "";
  return `[conversation_read: ${what}; chars ${start}-${end} of ${text.length}${more}]\n${text.slice(start, end)}`;
}
