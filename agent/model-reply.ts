// What a provider reply becomes when it is saved: only the block types this platform stores and
// replays, and the usage fields it keeps.
import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock, Usage } from "../core/types";

/** Only block types this platform stores and replays; anything else from the provider is dropped. */
export function keepKnownBlocks(blocks: Anthropic.ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of blocks) {
    if (b.type === "text") out.push({ type: "text", text: b.text });
    else if (b.type === "tool_use") out.push({ type: "tool_use", id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> });
  }
  return out;
}

export function pickUsage(u: Anthropic.Usage): Usage {
  return {
    input_tokens: u.input_tokens ?? 0,
    output_tokens: u.output_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
  };
}
