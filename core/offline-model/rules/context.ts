/**
 * What every request rule sees, and small helpers for walking a request with the JSON paths the
 * real API puts at the start of its messages (`messages.3.content.0: …`, 0-based, as sent).
 */
import { invalid } from "../errors";
import type { ModelProfile } from "../model";
import type { WireBlock, WireMessage, WireRequest } from "../wire";

export type Endpoint = "messages" | "count_tokens";

export interface RuleContext {
  /** The parsed body (untrusted JSON). */
  body: Record<string, unknown>;
  /** The same body typed loosely. */
  request: WireRequest;
  model: ModelProfile;
  endpoint: Endpoint;
  /** The `anthropic-beta` header's values, trimmed. */
  betas: readonly string[];
  /** The UTC day the request is served on (YYYY-MM-DD), for dated rules. */
  day: string;
}

/** A rule throws ApiError (errors.ts) on the first problem it finds and returns otherwise. */
export type Rule = (context: RuleContext) => void;

export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The schema's list of allowed literals: `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`. */
export const oneOf = (values: readonly string[]) =>
  values.length === 1
    ? `'${values[0]}'`
    : `${values
        .slice(0, -1)
        .map((v) => `'${v}'`)
        .join(", ")} or '${values[values.length - 1]}'`;

/** An optional literal field (null too when `nullable`): anything else is the schema's `<path>: Input should be …`. */
export function literal(
  value: unknown,
  { path, values, nullable = false }: { path: string; values: readonly string[]; nullable?: boolean },
): void {
  if (value === undefined || (nullable && value === null)) return;
  if (typeof value !== "string" || !values.includes(value)) throw invalid(`${path}: Input should be ${oneOf(values)}`);
}

/** A message's content as blocks (a string is one text block). */
export const blocksOf = (message: WireMessage): WireBlock[] =>
  typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : Array.isArray(message.content)
      ? message.content
      : [];

export interface BlockAt {
  block: WireBlock;
  message: WireMessage;
  /** Message and block index as sent. */
  i: number;
  j: number;
  path: string;
}

/** Every block of every message, in order, with its path. */
export function* eachBlock(request: WireRequest): Generator<BlockAt> {
  for (const [i, message] of request.messages.entries()) {
    for (const [j, block] of blocksOf(message).entries())
      yield { block, message, i, j, path: `messages.${i}.content.${j}` };
  }
}

/** Blocks nested inside a tool_result's content, with their paths. */
export function* nestedBlocks(at: BlockAt): Generator<{ block: WireBlock; path: string }> {
  if (at.block.type !== "tool_result" || !Array.isArray(at.block.content)) return;
  for (const [k, block] of (at.block.content as WireBlock[]).entries())
    yield { block, path: `${at.path}.tool_result.content.${k}` };
}

/** The system prompt as blocks with their paths (a string is one block at `system`). */
export function systemBlocks(request: WireRequest): { block: WireBlock; path: string }[] {
  const system = request.system;
  if (system === undefined || system === null) return [];
  if (typeof system === "string") return [{ block: { type: "text", text: system }, path: "system" }];
  return system.map((block, n) => ({ block, path: `system.${n}` }));
}

/**
 * The conversation as the model sees it: consecutive same-role messages merged into one turn
 * (https://platform.claude.com/docs/en/api/messages: "Consecutive user or assistant turns in your
 * request will be combined into a single turn"), each block keeping the index it was sent at.
 */
export interface Turn {
  role: string;
  /** Index of the first message merged into this turn. */
  first: number;
  blocks: BlockAt[];
}

export function mergedTurns(request: WireRequest): Turn[] {
  const turns: Turn[] = [];
  for (const [i, message] of request.messages.entries()) {
    if ((message.role as string) === "system") continue;
    const blocks = blocksOf(message).map((block, j) => ({ block, message, i, j, path: `messages.${i}.content.${j}` }));
    const last = turns[turns.length - 1];
    if (last && last.role === message.role) last.blocks.push(...blocks);
    else turns.push({ role: message.role, first: i, blocks });
  }
  return turns;
}

export const isText = (block: WireBlock) => block.type === "text";
export const textOfBlock = (block: WireBlock) => (typeof block.text === "string" ? block.text : "");
