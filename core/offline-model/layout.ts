/**
 * Lays a reply's parts out under its output budget (max_tokens, or what is left of the context
 * window), in the order the model writes them: thinking, server tool calls, text, the note before
 * tool calls, tool calls. A part that does not fit ends the reply there, cut where the budget runs
 * out: thinking and text are cut; a tool call is kept with its input JSON text cut, and spends the
 * rest of the budget, as the API's does (output_tokens equal to max_tokens, the call's
 * `input_json_delta`s stopping mid-JSON, its input what the client's partial parse reads from them:
 * cut-call.ts). A server tool call is left out whole.
 */
import { countTokens } from "../tokens";
import { scale, textTokens, truncateToModelTokens } from "./counting";
import { cutToolCall } from "./cut-call";
import { cutDraft, INTERRUPTED, type ThinkingDraft } from "./thinking";
import type { WireBlock } from "./wire";

export type Part =
  | { kind: "thinking"; draft: ThinkingDraft; progress?: boolean }
  | { kind: "text"; block: WireBlock }
  | { kind: "server"; blocks: WireBlock[] }
  | { kind: "tool"; block: WireBlock };

export interface Layout {
  content: (WireBlock | ThinkingDraft)[];
  /** The budget ran out before the last part. */
  cut: boolean;
  outputTokens: number;
  thinkingTokens: number;
}

const callTokens = (block: WireBlock, ratio: number) =>
  scale(countTokens(String(block.name ?? "")) + countTokens(JSON.stringify(block.input ?? {})), ratio);

export function partTokens(part: Part, ratio: number): number {
  switch (part.kind) {
    case "thinking":
      return part.draft.tokens;
    case "text":
      return textTokens(String(part.block.text ?? ""), ratio);
    case "server":
      return callTokens(part.blocks[0], ratio);
    case "tool":
      return callTokens(part.block, ratio);
  }
}

export function layOut(parts: readonly Part[], budget: number, ratio: number): Layout {
  const content: (WireBlock | ThinkingDraft)[] = [];
  let remaining = budget;
  let thinking = 0;
  let cut = false;
  for (const part of parts) {
    const cost = partTokens(part, ratio);
    if (cost <= remaining) {
      remaining -= cost;
      if (part.kind === "thinking") thinking += cost;
      content.push(...(part.kind === "thinking" ? [part.draft] : part.kind === "server" ? part.blocks : [part.block]));
      continue;
    }
    cut = true;
    if (remaining > 0 && part.kind === "thinking") {
      const draft = part.progress
        ? { ...part.draft, summary: INTERRUPTED, tokens: Math.max(part.draft.tokens, textTokens(INTERRUPTED, ratio)) }
        : part.draft;
      content.push(cutDraft(draft, remaining, ratio));
      thinking += remaining;
      remaining = 0;
    } else if (remaining > 0 && part.kind === "text") {
      const text = truncateToModelTokens(String(part.block.text ?? ""), remaining, ratio);
      if (text !== "") {
        content.push({ ...part.block, text });
        remaining -= textTokens(text, ratio);
      }
    } else if (remaining > 0 && part.kind === "tool") {
      // The name comes first, then as much of the input's text as the rest holds. The call takes
      // the whole rest: a real cut call ends at the budget (output_tokens is max_tokens), and a
      // rounding remainder here is a token the model spent on what was cut.
      const room = remaining - textTokens(String(part.block.name ?? ""), ratio);
      const json = room > 0 ? truncateToModelTokens(JSON.stringify(part.block.input ?? {}), room, ratio) : "";
      content.push(cutToolCall(part.block, json));
      remaining = 0;
    }
    break;
  }
  return { content, cut, outputTokens: budget - remaining, thinkingTokens: thinking };
}
