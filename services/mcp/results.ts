// An MCP tool result as the model reads it: text stays text; an image becomes an image block
// under the Messages API's image limits (core/image-limits.ts, as image_view), checked on the
// base64 exactly as it will be sent, or a note saying why it is not shown; a resource link or an embedded resource becomes text naming
// its uri (with the resource's text when it is embedded). Nothing is cut: a result within the caps
// (one message, message-cap.ts; its text, call.ts) is kept whole and replayed through stubs and
// compaction like any other, and one past them is an error result, never a part of it.
import type { ImageBlock, TextBlock } from "../../core/types";
import { checkBase64Image } from "../../core/image-limits";

type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name?: string; mimeType?: string; description?: string }
  | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: string; [k: string]: unknown };

export interface McpResultOutput {
  content: string;
  isError?: boolean;
  blocks?: Array<TextBlock | ImageBlock>;
}

function toBlock(c: McpContent): TextBlock | ImageBlock {
  switch (c.type) {
    case "text":
      return { type: "text", text: String((c as { text: string }).text) };
    case "image": {
      const { data, mimeType } = c as { data: string; mimeType: string };
      const check =
        typeof data === "string" ? checkBase64Image(mimeType, data) : { ok: false as const, problem: "no base64 data" };
      if (!check.ok) return { type: "text", text: `[image not shown: ${check.problem}]` };
      return { type: "image", source: { type: "base64", media_type: mimeType, data } };
    }
    case "resource_link": {
      const l = c as { uri: string; name?: string; mimeType?: string; description?: string };
      return {
        type: "text",
        text: `[resource link: ${l.name ?? l.uri} <${l.uri}>${l.mimeType ? ` ${l.mimeType}` : ""}${l.description ? ` — ${l.description}` : ""}]`,
      };
    }
    case "resource": {
      const r = (c as { resource: { uri: string; mimeType?: string; text?: string; blob?: string } }).resource;
      const head = `[resource <${r.uri}>${r.mimeType ? ` ${r.mimeType}` : ""}]`;
      if (typeof r.text === "string") return { type: "text", text: `${head}\n${r.text}` };
      const blob = r.blob ?? "";
      const bytes = Math.floor((blob.length * 3) / 4) - (blob.endsWith("==") ? 2 : blob.endsWith("=") ? 1 : 0);
      return { type: "text", text: `${head} binary, ${bytes} bytes, not shown` };
    }
    default:
      return { type: "text", text: `[${c.type} content not shown]` };
  }
}

export function mcpResultOutput(result: {
  content?: unknown;
  isError?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
}): McpResultOutput {
  const items = Array.isArray(result.content) ? (result.content as McpContent[]) : [];
  // JSON can carry a lone surrogate ("\ud800"); the API refuses a request holding one, on every
  // later turn that replays it, so each text is made well-formed (U+FFFD in its place).
  const blocks = items.map(toBlock).map((b) => (b.type === "text" ? { ...b, text: b.text.toWellFormed() } : b));
  // structuredContent without content, or the 2024-10-07 protocol's toolResult: JSON text.
  const structured = result.structuredContent ?? result.toolResult;
  if (!blocks.length && structured !== undefined)
    blocks.push({ type: "text", text: JSON.stringify(structured).toWellFormed() });
  const content =
    blocks
      .filter((b): b is TextBlock => b.type === "text")
      .map((b) => b.text)
      .join("\n") || (blocks.length ? "(image)" : "(no content)");
  return {
    content,
    ...(result.isError ? { isError: true } : {}),
    ...(blocks.some((b) => b.type === "image") ? { blocks } : {}),
  };
}
