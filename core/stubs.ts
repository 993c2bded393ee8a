// Stale tool-result stubs: at replay time, a large tool result older than the last few user
// exchanges is replaced by a deterministic, self-describing stub that names the exact call
// returning the original bytes. Nothing stored changes; no model call is made.
//
// Prompt caching: every newly stubbed result changes the replay from its position on, so
// transitions are batched. The stub watermark advances only once the chars that stubbing would
// reclaim pass `stubBatchChars`; between jumps the replayed prefix stays byte-identical. The
// watermark is derived from the history alone (replaying the exchange sequence), so it is the
// same on every call and in both rebuild paths, and needs no stored state (the /replay view counts
// the prompt the next request will add: applyStubsBeforePrompt). A refused turn, which no request
// carries (core/replay-rules.ts), is no exchange and has no stale results.
import { isAttachmentNote, isToolResultCarrier } from "./render";
import { refusedTurns } from "./replay-rules";
import type { ContentBlock, StoredMessage, ToolResultBlock, ToolUseBlock } from "./types";
import { sliceWhole } from "./text-cut";

export interface StubSettings {
  stubMinChars: number;
  stubAfterExchanges: number;
  stubBatchChars: number;
}

export interface StubOutcome {
  messages: StoredMessage[];
  stubbed: number;
  /** Chars of the originals that the stubs replaced, minus the stubs' own chars. */
  savedChars: number;
  /** Stale results not stubbed yet because their batch has not filled. */
  pendingChars: number;
}

const INPUT_BRIEF_CHARS = 160;
/** Exchanges a stale result waits for its batch to fill before it is stubbed anyway. */
export const STUB_BATCH_MAX_WAIT = 4;

/** An exchange starts here: a prompt, not a carrier of tool results nor an attachment's note. */
const isRealUserPrompt = (m: StoredMessage) => m.role === "user" && !isToolResultCarrier(m) && !isAttachmentNote(m);

/** Index in `messages` before which stale results are stubbed (0: none), replaying the batching. */
export function stubWatermark(messages: readonly StoredMessage[], s: StubSettings): number {
  const refused = refusedTurns(messages);
  const prompts: number[] = [];
  messages.forEach((m, i) => isRealUserPrompt(m) && !refused.has(i) && prompts.push(i));
  let watermark = 0;
  let cutoff = 0;
  let pending = 0;
  let pendingSince = 0;
  for (let j = 0; j < prompts.length; j++) {
    // With prompt j the newest, the last `stubAfterExchanges` exchanges start at this index.
    const k = j - s.stubAfterExchanges + 1;
    if (k < 1) continue;
    const nextCutoff = prompts[k];
    if (pending === 0) pendingSince = j;
    for (let i = cutoff; i < nextCutoff; i++) if (!refused.has(i)) pending += staleChars(messages[i], s.stubMinChars);
    cutoff = nextCutoff;
    // A batch that never fills (one stale result under it) is stubbed all the same, a few exchanges on.
    if (pending > 0 && (pending >= s.stubBatchChars || j - pendingSince >= STUB_BATCH_MAX_WAIT)) {
      watermark = cutoff;
      pending = 0;
    }
  }
  return watermark;
}

function staleChars(m: StoredMessage, min: number): number {
  if (!isToolResultCarrier(m)) return 0;
  let n = 0;
  for (const b of m.content) if (b.type === "tool_result" && !b.is_error) n += eligible(b, min);
  return n;
}

function eligible(b: ToolResultBlock, min: number): number {
  const chars = resultWeight(b);
  return chars >= min ? chars : 0;
}

/** What a result weighs in a request: its text, and an image at its base64 length (not its short label). */
function resultWeight(b: ToolResultBlock): number {
  if (typeof b.content === "string") return b.content.length;
  return b.content.reduce(
    (n, c) => n + (c.type === "text" ? c.text.length : c.type === "image" ? imageChars(c) : 0),
    Math.max(0, b.content.length - 1),
  );
}

const imageChars = (c: ContentBlock) =>
  c.type === "image" ? (c.source.type === "base64" ? c.source.data.length : c.source.url.length) : 0;
const imagesIn = (b: ToolResultBlock) =>
  typeof b.content === "string" ? 0 : b.content.filter((c) => c.type === "image").length;

/**
 * The prompt the next turn adds, as stubbing counts it (a real prompt; its words never matter): the
 * /replay view, taken between turns, ages results as the next request will, with that prompt in it.
 */
const NEXT_PROMPT: StoredMessage = {
  id: "",
  seq: Number.MAX_SAFE_INTEGER,
  role: "user",
  content: [{ type: "text", text: "the next prompt" }],
  createdAt: "",
};

/** applyStubs as the next request will apply them, once its new prompt follows `messages`. */
export function applyStubsBeforePrompt(
  messages: readonly StoredMessage[],
  s: StubSettings,
  conversationId: string,
): StubOutcome {
  const out = applyStubs([...messages, NEXT_PROMPT], s, conversationId);
  return { ...out, messages: out.messages.slice(0, -1) };
}

/** The history with every stale result before the watermark stubbed. Returns new objects only where changed. */
export function applyStubs(messages: readonly StoredMessage[], s: StubSettings, conversationId: string): StubOutcome {
  const watermark = stubWatermark(messages, s);
  const refused = refusedTurns(messages);
  const cutoff = staleCutoff(messages, s, refused);
  const calls = new Map<string, ToolUseBlock>();
  let stubbed = 0;
  let savedChars = 0;
  let pendingChars = 0;
  const out = messages.map((m, i) => {
    if (m.role === "assistant") for (const b of m.content) if (b.type === "tool_use") calls.set(b.id, b);
    if (!isToolResultCarrier(m) || refused.has(i)) return m;
    if (i >= watermark) {
      if (i < cutoff) pendingChars += staleChars(m, s.stubMinChars);
      return m;
    }
    let changed = false;
    const content = m.content.map((b, blockIndex): ContentBlock => {
      if (b.type !== "tool_result" || b.is_error || !eligible(b, s.stubMinChars)) return b;
      const chars = resultWeight(b);
      const stub = stubText({
        conversationId,
        message: m,
        blockIndex,
        chars,
        call: calls.get(b.tool_use_id),
        images: imagesIn(b),
      });
      changed = true;
      stubbed++;
      savedChars += chars - stub.length;
      return { type: "tool_result", tool_use_id: b.tool_use_id, content: stub };
    });
    return changed ? { ...m, content } : m;
  });
  return { messages: out, stubbed, savedChars, pendingChars };
}

/** The index where the last `stubAfterExchanges` exchanges start (results before it are stale). */
function staleCutoff(messages: readonly StoredMessage[], s: StubSettings, refused: ReadonlySet<number>): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!isRealUserPrompt(messages[i]) || refused.has(i)) continue;
    if (++seen === s.stubAfterExchanges) return i;
  }
  return 0;
}

/** The stub: what ran, how big its answer was, where it lives, and the call that returns it. */
export function stubText(opts: {
  conversationId: string;
  message: StoredMessage;
  blockIndex: number;
  chars: number;
  call?: ToolUseBlock;
  /** Images the result held: conversation_read returns text, so the call itself shows them again. */
  images?: number;
}): string {
  const { conversationId, message, blockIndex, chars, call, images = 0 } = opts;
  const input = call ? JSON.stringify(call.input) : "";
  const brief = input.length > INPUT_BRIEF_CHARS ? `${sliceWhole(input, 0, INPUT_BRIEF_CHARS)}…` : input;
  const what = call ? `${call.name} ${brief}` : "a tool call";
  const read = JSON.stringify({ conversation_id: conversationId, message_id: message.id, block: blockIndex });
  const where = `(message ${message.id}, seq ${message.seq})`;
  if (images > 0)
    return `[stale tool result replaced by this stub: ${what} returned ${images === 1 ? "an image" : `${images} images`}, ${chars.toLocaleString("en-US")} chars in all ${where}. The original is stored unchanged; conversation_read ${read} returns its text, and the same call again shows ${images === 1 ? "the image" : "the images"}.]`;
  return `[stale tool result replaced by this stub: ${what} returned ${chars.toLocaleString("en-US")} chars ${where}. The original is stored unchanged and searchable; conversation_read ${read} returns it byte for byte.]`;
}
