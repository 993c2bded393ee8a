/**
 * Plain-text directives that let tests and demos steer the offline model from
 * an ordinary chat message. Each directive is a whole line:
 *
 *   @tool NAME {json}     call tool NAME with that input (one call per line)
 *   @reply-chars N        reply with about N characters of prose
 *   @model-error STATUS [call=N] [summarize] [attempts=K]
 *                         answer with an HTTP error: 400, 429, 500 or 529, or `overflow` (the
 *                         400 "prompt is too long" of a request past the window). By default the call
 *                         answering the prompt fails; `call=N` fails the Nth model call of the turn
 *                         instead (2 = the call after the first tool result or continuation);
 *                         `summarize` fails summarization requests whose input carries the line
 *                         (the in-turn compaction's state call, a fold); `attempts=K` fails only
 *                         the first K attempts of that call (the SDK's retry counter), so a retry
 *                         then succeeds, as with a transient provider error
 *   @max-tokens-stop      end the reply with stop_reason "max_tokens"
 *   @tools-per-step N     issue the @tool calls N at a time, one batch per model call, as an
 *                         agent working through a list does (the next batch once the previous
 *                         one's results are in)
 *
 * A `<turn_state>` text block (the in-turn compactor's continuation nudge) is not user text: the
 * model keeps working from the prompt that started the turn, but under `@tools-per-step` it resumes
 * only from what the state's REMAINING section names (as a real model would after its context was
 * shortened), never from a count of earlier tool calls: a wrong state makes it redo or skip work.
 * Directives are read only from the latest *real* user text (its last text block) and only when that
 * message is the last one in the request. A follow-up request that ends with
 * tool results must not see them again, or an agent loop would call the same
 * tools forever.
 */
import { idTokens } from "../compactor";
import { blocksOf, hasTextBlock, textOf, type WireBlock, type WireMessage } from "./wire";

export const MODEL_ERROR_STATUSES = [400, 429, 500, 529] as const;
/** `overflow`: the 400 "prompt is too long" a request past the window gets, whatever its size. */
export type ModelErrorStatus = (typeof MODEL_ERROR_STATUSES)[number] | "overflow";

export interface ToolCallDirective {
  name: string;
  input: Record<string, unknown>;
}

/** Which model call a `@model-error` line fails, and for how many attempts. */
export interface ModelErrorRule {
  status: ModelErrorStatus;
  /** The model call of the turn that fails (1 = the one answering the prompt); null with `summarize`. */
  call: number | null;
  /** Fails summarization requests (in-turn compaction state, folds) instead of turn calls. */
  summarize: boolean;
  /** Only the first K attempts fail (SDK retries counted); null: every attempt. */
  attempts: number | null;
}

export interface Directives {
  toolCalls: ToolCallDirective[];
  replyChars: number | null;
  /** The status of the first `@model-error` rule for the prompt's own call, for simple callers. */
  modelError: ModelErrorStatus | null;
  modelErrors: ModelErrorRule[];
  maxTokensStop: boolean;
  /** Issue the tool calls this many per model call; null: all at once. */
  toolsPerStep: number | null;
  /** Human-readable problems (bad JSON, unsupported status) surfaced in the reply text. */
  notes: string[];
}

const TOOL_LINE = /^@tool\s+(\S+)(?:\s+(.*))?$/;
const REPLY_CHARS_LINE = /^@reply-chars\s+(\d+)$/;
const MODEL_ERROR_LINE = /^@model-error\s+(\d+|overflow)((?:\s+(?:call=\d+|summarize|attempts=\d+))*)$/;
const MAX_TOKENS_LINE = /^@max-tokens-stop$/;
const TOOLS_PER_STEP_LINE = /^@tools-per-step\s+(\d+)$/;
const ANY_DIRECTIVE_LINE = /^@(tool|reply-chars|model-error|max-tokens-stop|tools-per-step)\b/;

export function parseDirectives(text: string): Directives {
  const directives: Directives = { toolCalls: [], replyChars: null, modelError: null, modelErrors: [], maxTokensStop: false, toolsPerStep: null, notes: [] };
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    let match: RegExpMatchArray | null;
    if ((match = line.match(TOOL_LINE))) {
      directives.toolCalls.push(parseToolCall(match[1], match[2], directives.notes));
    } else if ((match = line.match(REPLY_CHARS_LINE))) {
      directives.replyChars = Number(match[1]);
    } else if ((match = line.match(MODEL_ERROR_LINE))) {
      const status = match[1] === "overflow" ? "overflow" : Number(match[1]);
      if (status === "overflow" || (MODEL_ERROR_STATUSES as readonly number[]).includes(status)) {
        const rule = modelErrorRule(status as ModelErrorStatus, match[2] ?? "");
        directives.modelErrors.push(rule);
        if (rule.call === 1 && directives.modelError === null) directives.modelError = rule.status;
      } else directives.notes.push(`@model-error ${status} ignored: supported statuses are ${MODEL_ERROR_STATUSES.join(", ")}.`);
    } else if (MAX_TOKENS_LINE.test(line)) {
      directives.maxTokensStop = true;
    } else if ((match = line.match(TOOLS_PER_STEP_LINE))) {
      directives.toolsPerStep = Math.max(1, Number(match[1]));
    }
  }
  return directives;
}

function modelErrorRule(status: ModelErrorStatus, options: string): ModelErrorRule {
  const summarize = /\bsummarize\b/.test(options);
  const call = Number(/call=(\d+)/.exec(options)?.[1] ?? 1);
  const attempts = /attempts=(\d+)/.exec(options)?.[1];
  return { status, call: summarize ? null : Math.max(1, call), summarize, attempts: attempts === undefined ? null : Number(attempts) };
}

/**
 * The error a request must answer with, if any. `retryCount` is the SDK's attempt counter for
 * this call (0 on the first try). Turn calls read the rules from the latest prompt and count the
 * call as 1 + the assistant messages after it; summarization requests read every text line.
 */
export function modelErrorFor(messages: readonly WireMessage[], summarizing: boolean, retryCount: number): ModelErrorStatus | null {
  let rules: ModelErrorRule[];
  let call = 0;
  if (summarizing) {
    rules = [];
    for (const m of messages)
      for (const b of blocksOf(m.content))
        if (b.type === "text") rules.push(...parseDirectives(String(b.text ?? "")).modelErrors.filter((r) => r.summarize));
  } else {
    const real = latestRealUserIndex(messages);
    if (real < 0) return null;
    const texts = blocksOf(messages[real].content).filter((b) => b.type === "text" && !isTurnState(b));
    rules = parseDirectives(textOf({ role: "user", content: [texts[texts.length - 1]] })).modelErrors.filter((r) => !r.summarize);
    call = 1 + messages.slice(real + 1).filter((m) => m.role === "assistant").length;
  }
  const hit = rules.find((r) => (summarizing || r.call === call) && (r.attempts === null || retryCount < r.attempts));
  return hit ? hit.status : null;
}

function parseToolCall(name: string, json: string | undefined, notes: string[]): ToolCallDirective {
  const source = json?.trim() ?? "";
  if (source === "") return { name, input: {} };
  try {
    const parsed: unknown = JSON.parse(source);
    // tool_use.input is always an object on the wire; anything else would break callers.
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return { name, input: parsed as Record<string, unknown> };
    }
    notes.push(`@tool ${name}: input must be a JSON object; sent {} instead.`);
  } catch {
    notes.push(`@tool ${name}: input is not valid JSON; sent {} instead.`);
  }
  return { name, input: {} };
}

/** The user's text with directive lines removed, for quoting and summaries. */
export function stripDirectives(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !ANY_DIRECTIVE_LINE.test(line.trim()))
    .join("\n");
}

const isTurnState = (block: WireBlock) => block.type === "text" && String(block.text ?? "").trimStart().startsWith("<turn_state>");

/** Whether a user message carries text the user wrote (a compaction nudge is not that). */
function hasUserText(message: WireMessage): boolean {
  return blocksOf(message.content).some((block) => block.type === "text" && !isTurnState(block));
}

/** Index of the last user message that carries a text block, or -1. */
export function latestRealUserIndex(messages: readonly WireMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user" && hasUserText(messages[i])) return i;
  }
  return -1;
}

/**
 * What the last message asks of the model:
 * - "user": a real user turn (directives apply);
 * - "tool-results": a user message made only of tool results (report on them);
 * - "continuation": anything else, e.g. an assistant prefill (plain reply, no directives).
 */
export type Turn =
  | { kind: "user"; text: string; directives: Directives }
  | { kind: "tool-results"; results: WireBlock[]; userText: string; nextCalls: ToolCallDirective[] }
  | { kind: "continuation"; userText: string };

export function classifyTurn(messages: readonly WireMessage[]): Turn {
  const last = messages[messages.length - 1];
  const realIndex = latestRealUserIndex(messages);
  const userText = realIndex >= 0 ? textOf(messages[realIndex]) : "";
  if (last.role === "user") {
    const blocks = blocksOf(last.content);
    const results = blocks.filter((block) => block.type === "tool_result");
    if (results.length > 0 && !hasUserText(last)) return { kind: "tool-results", results, userText, nextCalls: nextBatch(messages, realIndex) };
    if (realIndex === messages.length - 1) {
      // Only the newest text block: when a failed turn left a lone user message, the replay merges
      // it with the next prompt, and the old prompt's directives must not fire a second time.
      const texts = blocks.filter((block) => block.type === "text");
      const text = textOf({ role: "user", content: [texts[texts.length - 1]] });
      return { kind: "user", text, directives: parseDirectives(text) };
    }
  }
  return { kind: "continuation", userText };
}

const toolUses = (messages: readonly WireMessage[]) =>
  messages.flatMap((m) => (m.role === "assistant" ? blocksOf(m.content).filter((b) => b.type === "tool_use") : []));
const sameCall = (call: ToolCallDirective, block: WireBlock) => block.name === call.name && JSON.stringify(block.input) === JSON.stringify(call.input);

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
  const texts = blocksOf(messages[realIndex].content).filter((block) => block.type === "text" && !isTurnState(block));
  const directives = parseDirectives(textOf({ role: "user", content: [texts[texts.length - 1]] }));
  if (directives.toolsPerStep === null) return [];
  const state = latestRemaining(messages, realIndex);
  if (!state) {
    const issued = toolUses(messages.slice(realIndex + 1)).length;
    return directives.toolCalls.slice(issued, issued + directives.toolsPerStep);
  }
  const named = new Set(idTokens(state.remaining));
  const since = toolUses(messages.slice(state.at + 1));
  const pending = directives.toolCalls.filter(
    (call) => idTokens(JSON.stringify(call.input)).some((id) => named.has(id)) && !since.some((block) => sameCall(call, block)),
  );
  return pending.slice(0, directives.toolsPerStep);
}
