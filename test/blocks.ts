// Content blocks as tests read them: the blocks of one type out of a message's content, narrowed
// to that type, so a test reads `text`, `content` or `input` with the block's real type.
import type { ContentBlock, ToolResultBlock } from "../core/types";

export type BlockOf<T extends ContentBlock["type"]> = Extract<ContentBlock, { type: T }>;

/** The blocks of `type` in `content` (a string content has none). */
export const blocksOf = <T extends ContentBlock["type"]>(
  content: readonly ContentBlock[] | string,
  type: T,
): BlockOf<T>[] => (typeof content === "string" ? [] : content.filter((b): b is BlockOf<T> => b.type === type));

/** Every tool_result block of the messages, in order. */
export const toolResults = (messages: readonly { content: readonly ContentBlock[] | string }[]): ToolResultBlock[] =>
  messages.flatMap((m) => blocksOf(m.content, "tool_result"));

/** A tool result's text: its string content, or its text blocks joined by newlines. */
export const resultText = (b: ToolResultBlock): string =>
  typeof b.content === "string" ? b.content : b.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** A message's content as blocks (a string content is none). */
export const blocksIn = (m: { content: ContentBlock[] | string }): ContentBlock[] =>
  typeof m.content === "string" ? [] : m.content;

/** `b` narrowed to `type`; throws (failing the test) when it is another block. */
export function blockAs<T extends ContentBlock["type"]>(b: ContentBlock | undefined, type: T): BlockOf<T> {
  if (b?.type !== type) throw new Error(`expected a ${type} block, got ${JSON.stringify(b)?.slice(0, 200)}`);
  return b as BlockOf<T>;
}

/** A block's cache breakpoint, if it has one. */
export const cacheControlOf = (b: ContentBlock | undefined) =>
  b && "cache_control" in b ? b.cache_control : undefined;

/** `v` (a block, an event, a frame: any union tagged by `type`) narrowed to `type`; throws (failing the test) when it is another. */
export function ofType<U extends { type: string }, T extends U["type"]>(
  v: U | undefined,
  type: T,
): Extract<U, { type: T }> {
  if (v?.type !== type) throw new Error(`expected ${type}, got ${JSON.stringify(v)?.slice(0, 200)}`);
  return v as Extract<U, { type: T }>;
}

/** The text of a message's first block (or its string content), as the document's loosely described messages carry it. */
export const firstText = (content: string | readonly { type: string; [key: string]: unknown }[]): string => {
  if (typeof content === "string") return content;
  const text = content[0]?.text;
  if (typeof text !== "string")
    throw new Error(`expected a text block first, got ${JSON.stringify(content[0])?.slice(0, 200)}`);
  return text;
};
