/**
 * Decides what the offline model says: an HTTP error, a summary, or assistant
 * content with a stop reason, already cut to max_tokens.
 *
 * Tool calls: a `@tool` line produces a tool_use block even when NAME is not
 * in the request's `tools` list. We chose this on purpose: the caller's tool
 * registry is then exercised on its "unknown tool" path, exactly as when a
 * real model hallucinates a tool name.
 */
import { countTokens, truncateToTokens } from "../tokens";
import { classifyTurn, modelErrorFor, stripDirectives, type ModelErrorStatus, type ToolCallDirective } from "./directives";
import { idFrom } from "./hash";
import { prose, quoteReply, toolResultsReply } from "./reply";
import { summarize, summarizeOptions } from "./summarize";
import type { WireRequest } from "./wire";

export interface TextOut {
  type: "text";
  text: string;
}
export interface ToolUseOut {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export type ContentOut = TextOut | ToolUseOut;
export type StopReason = "end_turn" | "tool_use" | "max_tokens";

export type Generation =
  | { kind: "error"; status: ModelErrorStatus }
  | { kind: "message"; content: ContentOut[]; stopReason: StopReason; outputTokens: number };

export function generate(request: WireRequest, messageId: string, retryCount = 0): Generation {
  let text: string;
  let tools: ToolUseOut[] = [];
  let forceMaxTokens = false;

  const summary = summarizeOptions(request);
  const failure = modelErrorFor(request.messages, summary !== null, retryCount);
  if (failure !== null) return { kind: "error", status: failure };
  const turn = summary ? null : classifyTurn(request.messages);
  if (summary) {
    text = summarize(request, summary);
  } else if (turn!.kind === "tool-results") {
    text = toolResultsReply(turn!.results);
    if (turn!.nextCalls.length) {
      tools = toolUses(turn!.nextCalls, messageId);
      text = `${text}\n\nNext: ${tools.length} more ${tools.length === 1 ? "call" : "calls"}.`;
    }
  } else if (turn!.kind === "continuation") {
    text = quoteReply(stripDirectives(turn!.userText));
  } else {
    const { text: userText, directives } = turn!;
    tools = toolUses(directives.toolsPerStep === null ? directives.toolCalls : directives.toolCalls.slice(0, directives.toolsPerStep), messageId);
    if (directives.replyChars !== null) {
      text = prose(directives.replyChars, userText);
    } else {
      const lead =
        tools.length > 0
          ? `Calling ${tools.length} ${tools.length === 1 ? "tool" : "tools"}: ${tools.map((t) => t.name).join(", ")}.`
          : quoteReply(stripDirectives(userText).trim() || userText);
      text = [lead, ...directives.notes].join("\n\n");
    }
    // A reply cut off by max_tokens never carries finished tool calls, so an agent loop must not run any.
    if (directives.maxTokensStop) {
      forceMaxTokens = true;
      tools = [];
    }
  }
  return fitToMaxTokens(text, tools, request.max_tokens, forceMaxTokens);
}

function toolUses(calls: readonly ToolCallDirective[], messageId: string): ToolUseOut[] {
  return calls.map((call, i) => ({ type: "tool_use", id: `toolu_${idFrom(`${messageId}:${i}`)}`, name: call.name, input: call.input }));
}

function toolTokens(tool: ToolUseOut): number {
  return countTokens(tool.name) + countTokens(JSON.stringify(tool.input));
}

function fitToMaxTokens(text: string, tools: ToolUseOut[], maxTokens: number, forced: boolean): Generation {
  let stopReason: StopReason = forced ? "max_tokens" : tools.length > 0 ? "tool_use" : "end_turn";
  let textTokens = countTokens(text);
  const callTokens = tools.reduce((sum, tool) => sum + toolTokens(tool), 0);
  if (textTokens + callTokens > maxTokens) {
    // Text comes first in the reply, so the model runs out of budget before any tool call completes.
    tools = [];
    stopReason = "max_tokens";
    if (textTokens > maxTokens) {
      text = truncateToTokens(text, maxTokens);
      textTokens = countTokens(text);
    }
  }
  const content: ContentOut[] = [];
  // Keep a text block unless tool calls carry the reply: callers commonly read content[0].text.
  if (text !== "" || tools.length === 0) content.push({ type: "text", text });
  content.push(...tools);
  const outputTokens = textTokens + tools.reduce((sum, tool) => sum + toolTokens(tool), 0);
  return { kind: "message", content, stopReason, outputTokens };
}
