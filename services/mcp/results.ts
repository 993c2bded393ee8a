// An MCP tool result as the model reads it: text stays text; an image becomes an image block
// under the Messages API's image limits (core/image-limits.ts, as image_view), checked on the
// base64 exactly as it will be sent, or a note saying why it is not shown; a resource link or an embedded resource becomes text naming
// its uri (with the resource's text when it is embedded). Nothing is cut: a result within the caps
// (one message, message-cap.ts; its text, call.ts) is kept whole and replayed through stubs and
// compaction like any other, and one past them is an error result, never a part of it.
import type { ImageBlock, TextBlock } from "../../core/types";
import { checkBase64Image } from "../../core/image-limits";

/** A content block as the server sent it: read field by field, since the SDK no longer checks it. */
type McpContent = { type?: unknown; [k: string]: unknown };

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export interface McpResultOutput {
  content: string;
  isError?: boolean;
  blocks?: Array<TextBlock | ImageBlock>;
}

/**
 * One block of a result, judged by itself: a block of a type the platform does not know (a newer
 * protocol's, or a server's own) or that is no block at all becomes a note, and the others stand.
 */
function toBlock(item: unknown): TextBlock | ImageBlock {
  if (!item || typeof item !== "object" || Array.isArray(item))
    return { type: "text", text: "[content not shown: not a content block]" };
  const c = item as McpContent;
  switch (c.type) {
    case "text":
      return { type: "text", text: str(c.text) ?? String(c.text ?? "") };
    case "image": {
      const data = str(c.data);
      const mimeType = str(c.mimeType) ?? "";
      if (data === undefined) return { type: "text", text: "[image not shown: no base64 data]" };
      const check = checkBase64Image(mimeType, data);
      if (!check.ok) return { type: "text", text: `[image not shown: ${check.problem}]` };
      return { type: "image", source: { type: "base64", media_type: mimeType, data } };
    }
    case "resource_link": {
      const uri = str(c.uri) ?? "";
      const name = str(c.name);
      const mimeType = str(c.mimeType);
      const description = str(c.description);
      return {
        type: "text",
        text: `[resource link: ${name ?? uri} <${uri}>${mimeType ? ` ${mimeType}` : ""}${description ? ` — ${description}` : ""}]`,
      };
    }
    case "resource": {
      const r: Record<string, unknown> = c.resource && typeof c.resource === "object" ? { ...c.resource } : {};
      const mimeType = str(r.mimeType);
      const head = `[resource <${str(r.uri) ?? ""}>${mimeType ? ` ${mimeType}` : ""}]`;
      const text = str(r.text);
      if (text !== undefined) return { type: "text", text: `${head}\n${text}` };
      const blob = str(r.blob) ?? "";
      const bytes = Math.floor((blob.length * 3) / 4) - (blob.endsWith("==") ? 2 : blob.endsWith("=") ? 1 : 0);
      return { type: "text", text: `${head} binary, ${bytes} bytes, not shown` };
    }
    default:
      return {
        type: "text",
        text:
          typeof c.type === "string"
            ? `[${c.type.slice(0, 64)} content not shown]`
            : "[content not shown: a block with no type]",
      };
  }
}

export function mcpResultOutput(result: {
  content?: unknown;
  isError?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
}): McpResultOutput {
  const items: unknown[] = Array.isArray(result.content) ? result.content : [];
  // JSON can carry a lone surrogate ("\ud800"); the API refuses a request holding one, on every
  // later turn that replays it, so each text is made well-formed (U+FFFD in its place).
  const blocks = items.map(toBlock).map((b) => (b.type === "text" ? { ...b, text: b.text.toWellFormed() } : b));
  // structuredContent without content, or the 2024-10-07 protocol's toolResult: JSON text.
  const structured = result.structuredContent ?? result.toolResult;
  if (!blocks.length && structured !== undefined)
    blocks.push({ type: "text", text: JSON.stringify(structured).toWellFormed() });
  const hasImage = blocks.some((b) => b.type === "image");
  // "(image)" only beside an image: blank text alone stays blank, and the tool step stores it as
  // EMPTY_RESULT ("(the tool returned no text)"), as any tool's blank output.
  const content =
    blocks
      .filter((b): b is TextBlock => b.type === "text")
      .map((b) => b.text)
      .join("\n") || (hasImage ? "(image)" : blocks.length ? "" : "(no content)");
  return {
    content,
    ...(result.isError === true ? { isError: true } : {}),
    ...(hasImage ? { blocks } : {}),
  };
}
