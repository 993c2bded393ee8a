// A streamed reply arrives as many small deltas; it is saved as one text block per streamed
// text, never as thousands of fragments (the seed's "streaming deltas are coalesced at save").
import type { ContentBlock } from "./types";

/** Merges runs of adjacent text blocks into one block and drops empty text blocks. */
export function coalesceBlocks(blocks: readonly ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const block of blocks) {
    if (block.type === "text") {
      if (block.text === "") continue;
      const prev = out[out.length - 1];
      if (prev?.type === "text") {
        out[out.length - 1] = { type: "text", text: prev.text + block.text };
        continue;
      }
      out.push({ type: "text", text: block.text });
    } else {
      out.push(block);
    }
  }
  return out;
}
