// Text renderings of stored messages: what the cortex indexes and what conversation_read pages
// through. A single-block message renders as that block's own text, byte for byte.
import type { ContentBlock, StoredMessage, ToolResultBlock } from "./types";

export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return block.content.map((b) => (b.type === "text" ? b.text : `[image ${imageLabel(b)}]`)).join("\n");
}

function imageLabel(block: ContentBlock): string {
  if (block.type !== "image") return "";
  return block.source.type === "base64" ? `${block.source.media_type}, ${block.source.data.length} base64 chars` : block.source.url;
}

/** The raw text of one block: the text itself, a tool result's content, a tool call's JSON input. */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "tool_result":
      return toolResultText(block);
    case "tool_use":
      return JSON.stringify(block.input);
    case "image":
      return `[image ${imageLabel(block)}]`;
  }
}

function blockHeader(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return "";
    case "tool_result":
      return `[tool_result ${block.tool_use_id}${block.is_error ? " error" : ""}]\n`;
    case "tool_use":
      return `[tool_use ${block.name} ${block.id}] `;
    case "image":
      return "";
  }
}

/** One message as text. A single text or tool-result block is returned verbatim, with no header. */
export function renderMessageText(message: Pick<StoredMessage, "content">): string {
  const blocks = message.content;
  if (blocks.length === 1 && (blocks[0].type === "text" || blocks[0].type === "tool_result")) return blockText(blocks[0]);
  return blocks.map((b) => blockHeader(b) + blockText(b)).join("\n");
}

/** Characters a message contributes to a replay; the unit of the fold threshold and the estimates. */
export function messageChars(message: Pick<StoredMessage, "content">): number {
  let n = 0;
  for (const b of message.content) {
    if (b.type === "tool_use") n += b.name.length + JSON.stringify(b.input).length;
    else n += blockText(b).length;
  }
  return n;
}

/** True for a user message made only of tool results: a carrier, not a real user prompt. */
export function isToolResultCarrier(message: Pick<StoredMessage, "role" | "content">): boolean {
  return message.role === "user" && message.content.length > 0 && message.content.every((b) => b.type === "tool_result");
}
