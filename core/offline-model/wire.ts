/**
 * The subset of the Messages API request the offline model reads, typed
 * loosely on purpose: the body is untrusted JSON and unknown fields and block
 * kinds must pass through untouched rather than fail a type check.
 */

export interface CacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

export interface WireBlock {
  type: string;
  text?: string;
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

export interface WireMessage {
  role: "user" | "assistant";
  content: string | WireBlock[];
}

export interface WireTool {
  name: string;
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

export interface WireRequest {
  model: string;
  max_tokens: number;
  messages: WireMessage[];
  system?: string | WireBlock[];
  tools?: WireTool[];
  stream?: boolean;
  tool_choice?: unknown;
  thinking?: unknown;
  /** Request-level "automatic" caching: a breakpoint on the last cacheable block. */
  cache_control?: CacheControl | null;
}

/** A message's content as blocks; a bare string is one text block on the wire. */
export function blocksOf(content: WireMessage["content"]): WireBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** Concatenated text blocks of a message. */
export function textOf(message: WireMessage): string {
  return blocksOf(message.content)
    .filter((block) => block.type === "text")
    .map((block) => String(block.text ?? ""))
    .join("\n");
}

export function hasTextBlock(message: WireMessage): boolean {
  return blocksOf(message.content).some((block) => block.type === "text");
}

/** Text carried by a tool_result block (string content or its text blocks). */
export function toolResultText(block: WireBlock): string {
  const content = block.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as WireBlock[])
    .filter((inner) => inner.type === "text")
    .map((inner) => String(inner.text ?? ""))
    .join("\n");
}

/** System prompt as one string, for marker and option parsing. */
export function systemText(system: WireRequest["system"]): string {
  if (typeof system === "string") return system;
  // Defensive: the shape check refuses anything else, but this parses untrusted JSON.
  if (!Array.isArray(system)) return "";
  return system.map((block) => String(block?.text ?? "")).join("\n");
}
