/**
 * What the last message asks of the model, and which user text carries the prompt. A `<turn_state>`
 * text block (the in-turn compactor's continuation nudge) is not user text: the model keeps working
 * from the prompt that started the turn, but under `@tools-per-step` it resumes only from what the
 * state's REMAINING names (as a real model would after its context was shortened), never from a
 * count of earlier tool calls: a wrong state makes it redo or skip work. A continuation request
 * (continuation.ts) is not a prompt either. Directives are read only from the latest real user text
 * (its last text block) and only when that message is the last one in the request: a follow-up that
 * ends with tool results must not see them again, or an agent loop would call the same tools forever.
 */
import { idTokens } from "../compactor";
import { isContinuationRequest } from "./continuation";
import {
  type Directives,
  type ModelErrorRule,
  type ModelErrorStatus,
  parseDirectives,
  type ToolCallDirective,
} from "./directives";
import { blocksOf, textOf, type WireBlock, type WireMessage } from "./wire";

const isTurnState = (block: WireBlock) =>
  block.type === "text" &&
  String(block.text ?? "")
    .trimStart()
    .startsWith("<turn_state>");

/** Whether a user message carries text the user wrote (a compaction nudge is not that). */
function hasUserText(message: WireMessage): boolean {
  return blocksOf(message.content).some((block) => block.type === "text" && !isTurnState(block));
}

/** Index of the last user message that carries a prompt (not a nudge, not a continuation request), or -1. */
export function latestRealUserIndex(messages: readonly WireMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user" && hasUserText(messages[i]) && !isContinuationRequest(messages, i)) return i;
  }
  return -1;
}

/** The prompt's own text: the last text block of that message that is not a nudge. */
export function promptText(messages: readonly WireMessage[], index: number): string {
  const texts = blocksOf(messages[index].content).filter((block) => block.type === "text" && !isTurnState(block));
  return textOf({ role: "user", content: [texts[texts.length - 1]] });
}

/**
 * - "user": a real user turn (directives apply);
 * - "tool-results": a user message made only of tool results (report on them);
 * - "resume": the reply paused on a server tool, sent back as the last message (finish the answer);
 * - "continuation": an assistant prefill or a continuation request (plain reply, no directives).
 */
export type Turn =
  | { kind: "user"; text: string; directives: Directives }
  | { kind: "tool-results"; results: WireBlock[]; userText: string; nextCalls: ToolCallDirective[] }
  | { kind: "resume"; userText: string; paused: WireBlock[] }
  | { kind: "continuation"; userText: string };

export function classifyTurn(messages: readonly WireMessage[]): Turn {
  const last = messages[messages.length - 1];
  const realIndex = latestRealUserIndex(messages);
  const userText = realIndex >= 0 ? textOf(messages[realIndex]) : "";
  if (last.role === "user") {
    const blocks = blocksOf(last.content);
    const results = blocks.filter((block) => block.type === "tool_result");
    if (results.length > 0 && !hasUserText(last))
      return { kind: "tool-results", results, userText, nextCalls: nextBatch(messages, realIndex) };
    if (realIndex === messages.length - 1) {
      // Only the newest text block: when a failed turn left a lone user message, the replay merges
      // it with the next prompt, and the old prompt's directives must not fire a second time.
      const text = promptText(messages, realIndex);
      return { kind: "user", text, directives: parseDirectives(text) };
    }
  }
  if (last.role === "assistant") {
    const paused = blocksOf(last.content);
    if (paused.some((block) => block.type === "server_tool_use")) return { kind: "resume", userText, paused };
  }
  return { kind: "continuation", userText };
}

/**
 * The error a request must answer with, if any. `retryCount` is the SDK's attempt counter for
 * this call (0 on the first try). Turn calls read the rules from the latest prompt and count the
 * call as 1 + the assistant messages after it; summarization requests read every text line.
 */
export function modelErrorFor(
  messages: readonly WireMessage[],
  summarizing: boolean,
  retryCount: number,
): ModelErrorStatus | null {
  let rules: ModelErrorRule[];
  let call = 0;
  if (summarizing) {
    rules = [];
    for (const m of messages)
      for (const b of blocksOf(m.content))
        if (b.type === "text")
          rules.push(...parseDirectives(String(b.text ?? "")).modelErrors.filter((r) => r.summarize));
  } else {
    const real = latestRealUserIndex(messages);
    if (real < 0) return null;
    rules = parseDirectives(promptText(messages, real)).modelErrors.filter((r) => !r.summarize);
    call = 1 + messages.slice(real + 1).filter((m) => m.role === "assistant").length;
  }
  const hit = rules.find((r) => (summarizing || r.call === call) && (r.attempts === null || retryCount < r.attempts));
  return hit ? hit.status : null;
}

const toolUses = (messages: readonly WireMessage[]) =>
  messages.flatMap((m) => (m.role === "assistant" ? blocksOf(m.content).filter((b) => b.type === "tool_use") : []));
const sameCall = (call: ToolCallDirective, block: WireBlock) =>
  block.name === call.name && JSON.stringify(block.input) === JSON.stringify(call.input);

/** The REMAINING section of the newest turn state after `from`, with the index of its message; null when there is none. */
function latestRemaining(messages: readonly WireMessage[], from: number): { at: number; remaining: string } | null {
  for (let i = messages.length - 1; i > from; i--) {
    const state = blocksOf(messages[i].content).findLast(isTurnState);
    if (!state) continue;
    const text = String(state.text ?? "");
    const start = text.search(/^REMAINING:/m);
    if (start < 0) return { at: i, remaining: "" };
    const rest = text.slice(start + "REMAINING:".length);
    const end = rest.search(/^(?:[A-Z][A-Z ]+:|Resume from REMAINING)/m);
    return { at: i, remaining: end < 0 ? rest : rest.slice(0, end) };
  }
  return null;
}

/**
 * Under `@tools-per-step`, the next batch of the prompt's calls; else none. Before any compaction
 * that is the calls not issued yet in this turn. After one, only the calls whose ids the state's
 * REMAINING names, less those issued since the state: the request is all the model knows.
 */
function nextBatch(messages: readonly WireMessage[], realIndex: number): ToolCallDirective[] {
  if (realIndex < 0) return [];
  const directives = parseDirectives(promptText(messages, realIndex));
  if (directives.toolsPerStep === null) return [];
  const state = latestRemaining(messages, realIndex);
  if (!state) {
    const issued = toolUses(messages.slice(realIndex + 1)).length;
    return directives.toolCalls.slice(issued, issued + directives.toolsPerStep);
  }
  const named = new Set(idTokens(state.remaining));
  const since = toolUses(messages.slice(state.at + 1));
  const pending = directives.toolCalls.filter(
    (call) =>
      idTokens(JSON.stringify(call.input)).some((id) => named.has(id)) && !since.some((block) => sameCall(call, block)),
  );
  return pending.slice(0, directives.toolsPerStep);
}
