// A streamed reply arrives as many small deltas; it is saved as one text block per streamed
// text, never as thousands of fragments (the seed's "streaming deltas are coalesced at save").
import { isBlankText } from "./blank-text";
import { isThinkingBlock, type ContentBlock } from "./types";

/**
 * Merges runs of adjacent plain text blocks into one block and drops empty or whitespace-only text
 * blocks (the API refuses them when they are sent back). Text carrying citations is never merged,
 * and neither is anything in a reply with thinking: those blocks go back exactly as they came.
 */
export function coalesceBlocks(blocks: readonly ContentBlock[]): ContentBlock[] {
  const exact = blocks.some(isThinkingBlock);
  const out: ContentBlock[] = [];
  for (const block of blocks) {
    if (block.type !== "text") {
      out.push(block);
      continue;
    }
    if (isBlankText(block.text)) continue;
    const prev = out[out.length - 1];
    if (!exact && prev?.type === "text" && !prev.citations && !block.citations) {
      out[out.length - 1] = { type: "text", text: prev.text + block.text };
      continue;
    }
    out.push(block.citations ? block : { type: "text", text: block.text });
  }
  return out;
}
