// Replay: the one place where a conversation's stored history becomes a model request. Both
// rebuild paths — the model call of a turn and GET /replay — go through buildModelRequest, so
// what a person inspects is exactly what the model is sent.
//
// Issue #2 replays verbatim. The lifecycle (summary preamble + tail, stale-result stubs) plugs in
// here by narrowing `history` and rewriting blocks; callers do not change.
import { messageChars } from "./render";
import type { Settings } from "./settings";
import type { ContentBlock, ModelRequest, StoredMessage, SystemBlock, ToolSchema, WireMessage } from "./types";

export interface ReplayInput {
  settings: Settings;
  system: SystemBlock[];
  tools: ToolSchema[];
  /** The replay source, oldest first. */
  history: readonly StoredMessage[];
}

export interface ReplayEstimate {
  chars: number;
  tokens: number;
  budgetTokens: number;
  charsPerToken: number;
  messages: number;
}

export const INTERRUPTED_TOOL_RESULT = "[no result: the turn ended before this tool call returned]";

export function buildModelRequest(input: ReplayInput): { request: ModelRequest; estimate: ReplayEstimate } {
  const messages = toWireMessages(input.history);
  const request: ModelRequest = {
    model: input.settings.model,
    max_tokens: input.settings.outputReserveTokens,
    system: input.system,
    tools: input.tools,
    messages,
  };
  return { request, estimate: estimateRequest(request, input.settings) };
}

/**
 * Stored messages -> provider messages. Keeps the provider's invariants without touching what is
 * stored: roles alternate (adjacent same-role messages are merged, e.g. after a failed turn left a
 * lone user message), and every tool_use is answered by a tool_result in the next message (a turn
 * that crashed mid-tool gets a synthetic "no result" answer).
 */
export function toWireMessages(history: readonly StoredMessage[]): WireMessage[] {
  const out: { role: "user" | "assistant"; content: ContentBlock[] }[] = [];
  for (const m of history) {
    const prev = out[out.length - 1];
    if (prev && prev.role === m.role) prev.content = [...prev.content, ...m.content];
    else out.push({ role: m.role, content: [...m.content] });
  }
  for (let i = 0; i < out.length; i++) {
    const msg = out[i];
    if (msg.role !== "assistant") continue;
    const calls = msg.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
    if (!calls.length) continue;
    const next = out[i + 1];
    const answered = new Set(
      next?.role === "user" ? next.content.filter((b) => b.type === "tool_result").map((b) => (b as { tool_use_id: string }).tool_use_id) : [],
    );
    const missing = calls.filter((id) => !answered.has(id));
    if (!missing.length) continue;
    const patches: ContentBlock[] = missing.map((id) => ({ type: "tool_result", tool_use_id: id, content: INTERRUPTED_TOOL_RESULT, is_error: true }));
    if (next?.role === "user") next.content = [...patches, ...next.content];
    else out.splice(i + 1, 0, { role: "user", content: patches });
  }
  // A provider replay must start on a user turn.
  while (out.length && out[0].role !== "user") out.shift();
  return out;
}

export function estimateRequest(request: ModelRequest, settings: Settings): ReplayEstimate {
  let chars = 0;
  for (const s of request.system) chars += s.text.length;
  chars += JSON.stringify(request.tools).length;
  for (const m of request.messages) chars += typeof m.content === "string" ? m.content.length : messageChars({ content: m.content });
  return {
    chars,
    tokens: Math.ceil(chars / settings.charsPerToken),
    budgetTokens: settings.contextWindowTokens - settings.outputReserveTokens,
    charsPerToken: settings.charsPerToken,
    messages: request.messages.length,
  };
}
