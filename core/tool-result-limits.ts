// What one turn may store of tool results. A result is bounded on its own (a client's result text
// at 1,000,000 chars and a post at 64 results, core/client-tools.ts; an HTTP tool's body at its
// max response bytes), but a turn runs up to maxToolIterations steps, and the conversation object
// keeps a running turn's messages in memory (its replay tail, ReplayCache): without a bound of its
// own, a client-tool loop of 12 MiB posts passes the isolate's 128 MB within a few steps.
import { sliceWhole } from "./text-cut";
import { isAgentSegment, type ImageBlock, type NewMessage, type TextBlock, type ToolResultBlock } from "./types";

/**
 * The tool-result chars one turn may store: 16 MiB (16,777,216) chars, an image counting its
 * base64 chars. Held once in the object's tail (two bytes a char at worst: 32 MB), beside one post
 * in flight (12 MiB) and the step's request, it leaves the object well under 128 MB; and it is
 * more than 4 times what the largest context window (1M tokens) reads at once. Counted over the
 * turn's own steps (client and server tools alike); a sub-agent's thread, never held in the tail,
 * is not counted. A new turn starts again from nothing.
 */
export const TURN_TOOL_RESULT_CHARS = 16 * 1024 * 1024;

type ResultPart = TextBlock | ImageBlock;

const partChars = (b: ResultPart): number =>
  b.type === "text" ? b.text.length : b.source.type === "base64" ? b.source.data.length : b.source.url.length;

/** The chars a tool result stores: its text, and each image's base64 data (or its URL). */
export function resultChars(block: ToolResultBlock): number {
  return typeof block.content === "string" ? block.content.length : block.content.reduce((n, b) => n + partChars(b), 0);
}

const count = (n: number) => n.toLocaleString("en-US");

/** The note a result is stored with in place of what passed the turn's budget: the model reads it. */
export const resultCutNote = (cut: { dropped: number; of: number; budget: number }): string =>
  `[tool result cut: this turn's tool results reached the ${count(cut.budget)} chars one turn may store, so ` +
  `${count(cut.dropped)} of this result's ${count(cut.of)} chars were not stored. Ask for less (a narrower ` +
  "call), or go on in a new turn, which may store as much again.]";

/**
 * The tool results a turn stores, within its budget: each result that passes it is stored cut (its
 * text at a whole character, an image whole or not at all) with a note saying what was dropped
 * (resultCutNote); one with nothing left is the note alone, as an error. What fits is stored as it
 * came, the same objects. The turn goes on either way.
 */
export class TurnResultBudget {
  private spent: number;

  /** `earlier`: the turn's messages saved so far (a continued turn's), counted against `limit`. */
  constructor(
    readonly limit: number,
    earlier: readonly Pick<NewMessage, "content" | "agent">[] = [],
  ) {
    this.spent = 0;
    for (const m of earlier)
      if (!isAgentSegment(m)) for (const b of m.content) if (b.type === "tool_result") this.spent += resultChars(b);
  }

  /** `messages` as the turn may store them; a sub-agent's thread passes unchanged. */
  fit<M extends Pick<NewMessage, "content" | "agent">>(messages: M[]): M[] {
    return messages.map((m) => {
      if (isAgentSegment(m) || !m.content.some((b) => b.type === "tool_result")) return m;
      const content = m.content.map((b) => (b.type === "tool_result" ? this.fitResult(b) : b));
      return content.every((b, i) => b === m.content[i]) ? m : { ...m, content };
    });
  }

  private fitResult(block: ToolResultBlock): ToolResultBlock {
    const of = resultChars(block);
    const room = Math.max(0, this.limit - this.spent);
    if (of <= room) {
      this.spent += of;
      return block;
    }
    const parts: ResultPart[] =
      typeof block.content === "string" ? [{ type: "text", text: block.content }] : block.content;
    const kept: ResultPart[] = [];
    let left = room;
    for (const part of parts) {
      const size = partChars(part);
      if (size <= left) {
        kept.push(part);
        left -= size;
      } else if (part.type === "text" && left > 0) {
        // Cut at a whole character: what is left of the room goes to its head.
        const head = sliceWhole(part.text, 0, left);
        if (head.trim()) kept.push({ type: "text", text: head });
        left = 0;
      }
    }
    const stored = kept.reduce((n, p) => n + partChars(p), 0);
    this.spent += stored;
    const note = resultCutNote({ dropped: of - stored, of, budget: this.limit });
    if (!kept.length) return { ...block, content: note, is_error: true };
    if (typeof block.content === "string") return { ...block, content: `${(kept[0] as TextBlock).text}\n\n${note}` };
    return { ...block, content: [...kept, { type: "text", text: note }] };
  }
}
