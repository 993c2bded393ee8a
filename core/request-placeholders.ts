// The words that stand in for what core/request-limits.ts leaves out of a request: each says what
// was there, why it is not, and the call that brings it back, so the model can still reach it.
// Fixed wording, no clock and no counters: the same request always gives the same bytes.
import type { ImageInfo } from "./image-size";
import { sliceWhole } from "./text-cut";
import type { ImageBlock, StoredMessage, ToolUseBlock } from "./types";

const INPUT_BRIEF_CHARS = 160;

export type ImageReason = "count" | "many-large" | "size";

const REASONS: Record<ImageReason, (n: number) => string> = {
  count: (n) => `this model takes at most ${n} images per request and newer ones came after it`,
  "many-large": (n) =>
    `a request with more than ${n} images may not carry a side over 2000 px, so the oldest images make way for newer ones`,
  size: () => "the request would be over the Messages API's 32 MB limit",
};

/** Where a stored tool result lives, for the conversation_read call that returns it. */
export interface ResultLocation {
  messageId: string;
  block: number;
}

export type Locate = (toolUseId: string) => ResultLocation | null;

/** A locate function over the stored history a request was built from (its tool_result blocks by tool_use_id). */
export function toolResultLocator(history: readonly StoredMessage[]): Locate {
  const at = new Map<string, ResultLocation>();
  for (const m of history)
    m.content.forEach((b, block) => b.type === "tool_result" && at.set(b.tool_use_id, { messageId: m.id, block }));
  return (id) => at.get(id) ?? null;
}

const brief = (call: ToolUseBlock) => {
  const input = JSON.stringify(call.input);
  return `${call.name} ${input.length > INPUT_BRIEF_CHARS ? `${sliceWhole(input, 0, INPUT_BRIEF_CHARS)}…` : input}`;
};

/** "[image left out of this request: 2400x1800 image/png returned by image_view {...}, because …; conversation_read {...} returns it.]" */
export function imagePlaceholder(
  image: ImageBlock,
  {
    info,
    reason,
    limit,
    call,
    stored,
  }: {
    info: ImageInfo | null;
    reason: ImageReason;
    limit: number;
    call: ToolUseBlock | undefined;
    /** The stored result it came in, when known: conversation_read returns its images as they were. */
    stored?: { where: ResultLocation; conversationId: string | undefined };
  },
): string {
  const size = info ? `${info.width}x${info.height} ` : "";
  const type = image.source.type === "base64" ? image.source.media_type : image.source.url;
  const from = call ? ` returned by ${brief(call)}` : " sent in the conversation";
  // Running the tool again shows what is there now (a client's screenshot, an MCP tool's): the
  // stored result is what brings the original back, when the request was built from it.
  const again = stored
    ? `${readCall(stored.where, stored.conversationId)} returns it`
    : call
      ? `calling ${brief(call)} again shows it`
      : "it cannot be shown again here; ask for it to be sent again if it is needed";
  // Left out for the many-image rule, it comes back as the newest image: those are the ones kept.
  const kept = reason === "many-large" ? " (the newest images are kept)" : "";
  return `[image left out of this request: ${size}${type}${from}, because ${REASONS[reason](limit)}; ${again}${kept}.]`;
}

/** The stub of a tool result left out for the request's size, with the call that returns it byte for byte. */
export function resultStub(
  chars: number,
  {
    call,
    where,
    conversationId,
  }: { call: ToolUseBlock | undefined; where: ResultLocation | null; conversationId: string | undefined },
): string {
  const what = call ? brief(call) : "a tool call";
  const read = where
    ? `${readCall(where, conversationId)} returns it byte for byte`
    : "conversation_read finds it among this conversation's stored messages";
  return `[tool result left out of this request to fit the Messages API's 32 MB limit: ${what} returned ${chars.toLocaleString("en-US")} chars. It is stored unchanged; ${read}.]`;
}

/** The conversation_read call that returns a stored tool result (its text, and its images as images). */
function readCall(where: ResultLocation, conversationId: string | undefined): string {
  const args = {
    ...(conversationId ? { conversation_id: conversationId } : {}),
    message_id: where.messageId,
    block: where.block,
  };
  return `conversation_read ${JSON.stringify(args)}`;
}

/** Bytes of `s` as UTF-8 (what the request body weighs), without encoding it. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
