/**
 * What a thinking block is bound to: a hash of everything before it in the conversation, the
 * "prefix" (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking): the system
 * prompt, the tools and every earlier block, in order, each with its role. Thinking blocks are left
 * out (their own order is checked through the chain each signature carries, see thinking-check.ts),
 * and so is what the docs put outside the prefix: cache_control, tool_choice, effort, max_tokens,
 * metadata and thinking.display. Consecutive same-role messages count as one turn (the API merges
 * them), so splitting or merging them leaves the prefix as it was. Blocks are compared by a
 * canonical JSON (keys sorted, null fields dropped, `caller` ignored) except tool inputs, whose key
 * order is part of what the model read.
 */
import { hashHex, hashString, hashUpdate, type Hash64 } from "./hash";
import type { WireBlock, WireRequest } from "./wire";

const SKIPPED_FIELDS = new Set(["cache_control", "caller"]);
const THINKING = new Set(["thinking", "redacted_thinking"]);
export const isThinkingBlock = (block: WireBlock): boolean => THINKING.has(block.type);

function canonical(value: unknown, keepOrder = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, keepOrder)).join(",")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  // Null fields of a block are absent fields; inside a tool input a null is a value.
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([, v]) => v !== undefined && (keepOrder || v !== null),
  );
  if (!keepOrder) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, keepOrder || k === "input")}`).join(",")}}`;
}

/** One block as the model reads it (strings become text blocks; markers and callers dropped). */
export function canonicalBlock(block: WireBlock): string {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block)) {
    if (SKIPPED_FIELDS.has(key)) continue;
    rest[key] = key === "content" && typeof value === "string" ? [{ type: "text", text: value }] : value;
  }
  return canonical(rest);
}

const contentOf = (content: WireRequest["messages"][number]["content"]): WireBlock[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];

/** The running prefix hash: system and tools first. */
export function startPrefix(request: Pick<WireRequest, "system" | "tools">): Hash64 {
  let state = hashString("prefix/v1");
  const system =
    typeof request.system === "string"
      ? request.system === ""
        ? []
        : [{ type: "text", text: request.system }]
      : (request.system ?? []);
  state = hashUpdate(state, `system:${canonical(system.map((block) => JSON.parse(canonicalBlock(block))))}`);
  const tools = (request.tools ?? []).map((tool) => JSON.parse(canonicalBlock(tool as unknown as WireBlock)));
  return hashUpdate(state, `tools:${canonical(tools)}`);
}

/** Folds one non-thinking block into the prefix. */
export const extendPrefix = (state: Hash64, role: string, block: WireBlock): Hash64 =>
  hashUpdate(state, `${role}:${canonicalBlock(block)}`);

export const prefixHex = (state: Hash64): string => hashHex(state);

export interface PrefixWalk {
  /** The prefix hash just before each block, by "i.j" (message and block index as sent). */
  before: Map<string, string>;
  /** The prefix after the whole request (what a reply to it is bound to). */
  end: Hash64;
}

/** Walks the request once, noting the prefix before every thinking block. `skip` leaves blocks out (dropped ones). */
export function walkPrefix(request: WireRequest, skip: (i: number, j: number) => boolean = () => false): PrefixWalk {
  let state = startPrefix(request);
  const before = new Map<string, string>();
  for (const [i, message] of request.messages.entries()) {
    for (const [j, block] of contentOf(message.content).entries()) {
      if (skip(i, j)) continue;
      if (isThinkingBlock(block)) before.set(`${i}.${j}`, hashHex(state));
      else state = extendPrefix(state, message.role, block);
    }
  }
  return { before, end: state };
}
