// Replay: the one place where a conversation's stored history becomes a model request. Both
// rebuild paths — the model call of a turn and GET /replay — go through buildModelRequest, so
// what a person inspects is exactly what the model is sent.
//
// Replay = summary preamble + acknowledgement + the verbatim tail after the fold boundary. Stale
// tool-result stubs plug in here too, by rewriting blocks of the tail; callers do not change. So
// do the stubs of earlier messages too large for the window (core/stubs.ts, fitToWindow).
import { isAttachmentNote, messageChars } from "./render";
import { CONTINUE_PROMPT, needsContinuePrompt, replayableHistory } from "./replay-rules";
import { fitRequestLimits } from "./request-limits";
import { keepValidThinking, knownThinking, thinkingKey } from "./thinking-guard";
import { toolResultLocator } from "./request-placeholders";
import { applyStubs, applyStubsBeforePrompt, fitToWindow } from "./stubs";
import { requestChars } from "./compactor";
import type { ModelEntry } from "./models/catalog";
import { modelParams, serverToolSpecs } from "./model-params";
import type { Settings } from "./settings";
import {
  isAgentSegment,
  isServerToolResult,
  type ContentBlock,
  type ModelRequest,
  type StoredMessage,
  type SystemBlock,
  type ToolSchema,
  type WireMessage,
} from "./types";

export interface ReplayInput {
  conversationId: string;
  settings: Settings;
  /** The catalog entry of the model the request goes to (settings.model, or what replaced it). */
  model: ModelEntry;
  system: SystemBlock[];
  tools: ToolSchema[];
  /** The replay source, oldest first: every message after the fold boundary. */
  history: readonly StoredMessage[];
  /** The rolling summary of everything before `history`, once a fold has happened. */
  summary?: SummaryState | null;
  /**
   * The seq through which stale tool results were stubbed when the last fold committed
   * (ConversationHead.stubbedThroughMessage): those in the tail stay stubbed (core/stubs.ts StubInput).
   */
  stubbedThrough?: number;
  /** The last seq of a transcript the conversation was imported from: those messages go back without their sealed blocks. */
  importedThrough?: number;
  /**
   * No turn runs (the /replay view): the request as the next turn's will be but for its new prompt.
   * A refused turn at the end goes whole, results age into stubs as that prompt will age them, and a
   * cut-off reply at the end gets no continue prompt (the new prompt follows it). A turn waiting on
   * client tools' results (`awaitingResults`) is shown as it is: those results come next, not a prompt.
   */
  between?: boolean;
  /**
   * With `between`: a paused turn waits on its client tools' results (the object's paused state),
   * so they, not a new prompt, come next. Told by the object, never by the history's shape: a last
   * reply with tool calls no turn waits on (a step cut off, an imported transcript ending on a call)
   * is followed by a new prompt, its calls answered as interrupted.
   */
  awaitingResults?: boolean;
}

export interface SummaryState {
  summary: string;
  /** Seq of the last message the summary covers. */
  throughSeq: number;
}

export interface ReplayEstimate {
  /** Every char of the request: system + tool schemas + messages. */
  chars: number;
  /** The system prompt and tool schemas: the byte-stable prefix. */
  prefixChars: number;
  /** The messages: summary preamble, acknowledgement and verbatim tail. */
  messageChars: number;
  tokens: number;
  budgetTokens: number;
  charsPerToken: number;
  messages: number;
  /** Stale tool results replaced by stubs, the chars that saved, and stale chars awaiting their batch. */
  stubbedResults: number;
  stubSavedChars: number;
  stubPendingChars: number;
}

export const INTERRUPTED_TOOL_RESULT = "[no result: the turn ended before this tool call returned]";

/**
 * The master's thread: the history without the sub-agents' segments. A delegated run already
 * reached the master once, as its agent_delegate tool_result; replaying the run's own messages
 * too would carry that work a second time on every later request.
 */
export function masterThread(messages: readonly StoredMessage[]): readonly StoredMessage[] {
  return messages.some(isAgentSegment) ? messages.filter((m) => !isAgentSegment(m)) : messages;
}

/**
 * Each request buildModelRequest's thinking guard changed, with the request before that pass. A turn
 * whose compactor rewrites the request runs the guard itself, once, on the request actually sent:
 * guarded here, a reply produced after a compacted request (its thinking's prefix is the compacted
 * one) would lose its thinking before the compaction is put back.
 */
const unguarded = new WeakMap<ModelRequest, ModelRequest>();

/** A built request as it was before the thinking guard's pass (the same request when the guard left it as it was). */
export function beforeThinkingGuard(request: ModelRequest): ModelRequest {
  return unguarded.get(request) ?? request;
}

/**
 * The stored block a request's block stands for: a breakpoint's copy (withCacheBreakpoints) names
 * the block it copies, so where a block is stored can still be found by identity.
 */
const copiedFrom = new WeakMap<ContentBlock, ContentBlock>();

export function storedBlockOf(block: ContentBlock): ContentBlock {
  return copiedFrom.get(block) ?? block;
}

/** The most characters the API takes in a history's tool call name: past it, every later request is a 400. */
export const MAX_TOOL_USE_NAME_CHARS = 200;

/**
 * A stored tool call by a name the API refuses in the history (over 200 characters: "tool_use.name:
 * String should have at most 200 characters", anthropics/claude-code#2673) goes back with the name
 * cut to its first 200 characters (code points, as the API counts them; never half a surrogate
 * pair). The call never ran (the registry answered it as an unknown tool), its id still pairs it
 * with that result, and the record keeps the name the model gave. The copy names the stored block
 * (storedBlockOf); the same stored call gives the same bytes on every request.
 */
function sendableToolUse(block: ContentBlock): ContentBlock {
  if (block.type !== "tool_use" || block.name.length <= MAX_TOOL_USE_NAME_CHARS) return block;
  const chars = [...block.name];
  if (chars.length <= MAX_TOOL_USE_NAME_CHARS) return block;
  const copy: ContentBlock = { ...block, name: chars.slice(0, MAX_TOOL_USE_NAME_CHARS).join("") };
  copiedFrom.set(copy, block);
  return copy;
}

export function buildModelRequest(input: ReplayInput): { request: ModelRequest; estimate: ReplayEstimate } {
  const thread = masterThread(input.history);
  const promptNext = input.between === true && input.awaitingResults !== true;
  const stubs = (promptNext ? applyStubsBeforePrompt : applyStubs)(
    thread,
    { ...input.settings, stubbedThrough: input.stubbedThrough },
    input.conversationId,
  );
  const preamble = input.summary ? summaryPreamble(input.conversationId, input.summary) : [];
  const tools = [...input.tools, ...serverToolSpecs(input.settings.serverTools, input.model)];
  const known = knownThinking(input.history);
  // An earlier message too large for the window (the tail never folds) goes as a stub of its head.
  // Thinking weighs as the guard below will send it: an unknown block never goes back.
  const windowFit = fitToWindow(stubs.messages, {
    conversationId: input.conversationId,
    fixedChars: requestChars({ system: input.system, tools, messages: preamble }),
    budgetChars: windowBudgetChars(input.settings),
    promptNext,
    knownThinking: (block) => known.has(thinkingKey(block)),
  });
  const messages = withCacheBreakpoints(
    [...preamble, ...toWireMessages(windowFit.messages, input.importedThrough, promptNext)],
    preamble.length,
  );
  const built: ModelRequest = {
    // The settings' id (or alias); the entry's own id when it stands in for a retired model.
    model:
      input.model.id === input.settings.model || input.model.aliases.includes(input.settings.model)
        ? input.settings.model
        : input.model.id,
    ...modelParams(input.settings, input.model),
    system: input.system,
    tools,
    messages,
  };
  // Last: what the API refuses by count or size (images past its limits, a body over 32 MB) is left
  // out with a placeholder naming the call that brings it back (core/request-limits.ts).
  let located: ReturnType<typeof toolResultLocator> | undefined;
  const locate: ReturnType<typeof toolResultLocator> = (id) => (located ??= toolResultLocator(input.history))(id);
  const fitted = fitRequestLimits(built, input.model.maxImages, {
    conversationId: input.conversationId,
    locate,
  }).request;
  // Really last: a thinking block goes back only while everything before it is as it was produced.
  const request = keepValidThinking(fitted, known);
  if (request !== fitted) unguarded.set(request, fitted);
  const estimate = {
    ...estimateRequest(request, input.settings),
    stubbedResults: stubs.stubbed,
    stubSavedChars: stubs.savedChars,
    stubPendingChars: stubs.pendingChars,
  };
  return { request, estimate };
}

/**
 * What a request may hold, in chars: the window less the output reserve, at the chars per token of
 * the settings (as the estimate and the in-turn compactor count; settings that overstate the model's
 * window are corrected by the overflow's forced pass, which learns the real one).
 */
export function windowBudgetChars(
  settings: Pick<Settings, "contextWindowTokens" | "outputReserveTokens" | "charsPerToken">,
): number {
  return Math.max(
    0,
    Math.floor((settings.contextWindowTokens - settings.outputReserveTokens) * settings.charsPerToken),
  );
}

/**
 * Prompt-cache breakpoints on messages (the system prompt carries its own, four in all): after the
 * summary acknowledgement, which only a fold changes; on the last message, so the next call of the
 * turn, or the next turn, reads everything before it from the cache; and on the last message of
 * the request before (the user message before the newest reply, or before a paused reply sent
 * back to go on), whose prefix that request wrote.
 * A read looks back only 20 blocks from a breakpoint for an earlier write, so without that one a
 * step adding more blocks (parallel tool calls, thinking and text) would write the whole tail
 * again. Blocks are copied: stored messages never carry cache_control. A breakpoint goes on the
 * last block that may carry one: never a thinking block (the API refuses cache_control there) or
 * an empty text block.
 */
export function withCacheBreakpoints(messages: WireMessage[], preambleLength: number): WireMessage[] {
  const last = messages.length - 1;
  const marks = new Set<number>([last]);
  if (preambleLength > 0) marks.add(preambleLength - 1);
  // The request before ended with the user message before the newest reply, or, when the last
  // message is a reply paused at `pause_turn` sent back to go on, with the message just before it.
  const prior =
    messages[last]?.role === "assistant" ? last - 1 : messages[last - 1]?.role === "assistant" ? last - 2 : -1;
  if (prior >= preambleLength) marks.add(prior);
  return messages.map((m, i) => {
    if (!marks.has(i) || typeof m.content === "string" || !m.content.length) return m;
    const at = m.content.findLastIndex((b) => cacheable(b));
    if (at < 0) return m;
    const content = [...m.content];
    const copy = { ...content[at], cache_control: { type: "ephemeral" } } as ContentBlock;
    copiedFrom.set(copy, storedBlockOf(content[at]));
    content[at] = copy;
    return { ...m, content };
  });
}

/** A block the API takes cache_control on: never a thinking block, nor an empty text block. */
export const cacheable = (b: ContentBlock): boolean =>
  b.type !== "thinking" && b.type !== "redacted_thinking" && !(b.type === "text" && b.text === "");

/**
 * The summary as replay's first exchange: a user-role preamble holding the summary and a standing
 * recovery pointer (the exact calls that bring the folded originals back), then a synthetic
 * assistant acknowledgement. Both change only when a fold lands, so the prefix stays byte-stable
 * between folds.
 */
export function summaryPreamble(conversationId: string, s: SummaryState): WireMessage[] {
  const range = JSON.stringify({ conversation_id: conversationId, from_seq: 1, to_seq: s.throughSeq });
  const preamble = [
    "<conversation_summary>",
    `Messages 1-${s.throughSeq} of this conversation (${conversationId}) are folded into the summary below. Their originals are stored unchanged and can be recalled exactly:`,
    `- conversation_read ${range} reads them (50 at a time; or one message by message_id, byte for byte);`,
    `- memory_search {"query":"..."} finds them by words, in this conversation and every other one.`,
    "When the user refers to something from before that is not in view, recall it with those calls before answering.",
    "",
    // The summary (a model's words, or a fallback's list of prompts) cannot close its block and
    // speak as the platform after it: the blocks' tags lose their `<` (the same tags and rule as
    // core/fold.ts neutralizeSummaryTags in the fold request). Deterministic: the prefix stays stable.
    s.summary.replace(/<(\s*\/?\s*)(conversation_summary|previous_summary|new_messages)/gi, "&lt;$1$2"),
    "</conversation_summary>",
  ].join("\n");
  const ack = `Understood. I have the summary of messages 1-${s.throughSeq}, and I will recall exact details with conversation_read or memory_search when they matter.`;
  return [
    { role: "user", content: [{ type: "text", text: preamble }] },
    { role: "assistant", content: [{ type: "text", text: ack }] },
  ];
}

/**
 * Stored messages -> provider messages. Keeps the provider's invariants without touching what is
 * stored: the rules of core/replay-rules.ts (refused turns, earlier thinking, blank text), a
 * continuation prompt after a cut-off reply, roles alternating (adjacent same-role messages are
 * merged, e.g. after a failed turn left a lone user message), every tool_use answered by a
 * tool_result in the next message (a turn that crashed mid-tool gets a synthetic "no result"
 * answer), a tool call's name the API would refuse cut to 200 characters (sendableToolUse), and no
 * server tool call without its result except in the final message (a paused
 * turn's reply, resent as the API asks). Messages up to seq `importedThrough` (an import's) go
 * without their sealed blocks (replay-rules.ts). `between`: a new prompt will follow the last
 * message (the /replay view), so a cut-off reply there gets no continue prompt and a server call
 * there no longer waits for its result.
 */
export function toWireMessages(stored: readonly StoredMessage[], importedThrough = 0, between = false): WireMessage[] {
  const history = replayableHistory(stored, importedThrough, between);
  const out: { role: "user" | "assistant"; content: ContentBlock[] }[] = [];
  const push = (role: "user" | "assistant", content: readonly ContentBlock[]) => {
    const prev = out[out.length - 1];
    // Pushed in place: every content array here is this function's own copy (made just below), and
    // copying it on each merge was quadratic (an import of 32,000 lone user messages took 54 s).
    if (prev && prev.role === role) for (const block of content) prev.content.push(block);
    else out.push({ role, content: [...content] });
  };
  history.forEach((m, i) => {
    push(m.role, m.role === "assistant" ? m.content.map(sendableToolUse) : m.content);
    const last = i === history.length - 1;
    if (!(between && last) && needsContinuePrompt(m, history[i + 1]))
      push("user", [{ type: "text", text: CONTINUE_PROMPT }]);
  });
  withoutUnansweredServerCalls(out, between);
  for (let i = 0; i < out.length; i++) {
    const msg = out[i];
    if (msg.role !== "assistant") continue;
    const calls = msg.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
    if (!calls.length) continue;
    const next = out[i + 1];
    const answered = new Set(
      next?.role === "user"
        ? next.content.filter((b) => b.type === "tool_result").map((b) => (b as { tool_use_id: string }).tool_use_id)
        : [],
    );
    const missing = calls.filter((id) => !answered.has(id));
    if (!missing.length) continue;
    const patches: ContentBlock[] = missing.map((id) => ({
      type: "tool_result",
      tool_use_id: id,
      content: INTERRUPTED_TOOL_RESULT,
      is_error: true,
    }));
    if (next?.role === "user") next.content = [...patches, ...next.content];
    else out.splice(i + 1, 0, { role: "user", content: patches });
  }
  // A provider replay must start on a user turn.
  while (out.length && out[0].role !== "user") out.shift();
  return out.filter((m) => m.content.length);
}

/**
 * A server tool call whose result never came (a paused turn that was not resumed) cannot be
 * replayed, nor a result whose call is gone. A result may come one reply later: a reply with both
 * server and client calls gets the server's result at the start of the next response, after the
 * client's results (handling-stop-reasons), so a call still awaited is kept.
 */
function withoutUnansweredServerCalls(
  out: { role: "user" | "assistant"; content: ContentBlock[] }[],
  promptNext: boolean,
): void {
  const results = new Set<string>();
  const calls = new Set<string>();
  for (const m of out) for (const b of m.content) if (isServerToolResult(b)) results.add(b.tool_use_id);
  // Still awaited: in the last message (a paused reply resent), or in the reply the client's tool
  // results that end the request answer: the user message after it opens with those results, and
  // anything after them is an attachment note (one uploaded during the pause rides with them). Never
  // when a new prompt follows: it ends the request.
  const last = out.length - 1;
  const awaiting = (i: number) =>
    !promptNext && (i === last || (i === last - 1 && out[last].role === "user" && onlyResultsAndNotes(out[last])));
  out.forEach((m, i) => {
    if (m.role !== "assistant") return;
    if (!awaiting(i) && m.content.some((b) => b.type === "server_tool_use" && !results.has(b.id))) {
      m.content = m.content.filter((b) => b.type !== "server_tool_use" || results.has(b.id));
    }
    for (const b of m.content) if (b.type === "server_tool_use") calls.add(b.id);
  });
  for (const m of out)
    if (m.content.some((b) => isServerToolResult(b) && !calls.has(b.tool_use_id)))
      m.content = m.content.filter((b) => !isServerToolResult(b) || calls.has(b.tool_use_id));
}

/** Tool results first (at least one), then nothing but attachment notes. */
function onlyResultsAndNotes(m: { role: "user" | "assistant"; content: ContentBlock[] }): boolean {
  const results = m.content.findIndex((b) => b.type !== "tool_result");
  if (results === 0) return false;
  return results < 0 || isAttachmentNote({ role: m.role, content: m.content.slice(results) });
}

export function estimateRequest(
  request: ModelRequest,
  settings: Settings,
): Omit<ReplayEstimate, "stubbedResults" | "stubSavedChars" | "stubPendingChars"> {
  let prefixChars = JSON.stringify(request.tools).length;
  for (const s of request.system) prefixChars += s.text.length;
  let messagesChars = 0;
  for (const m of request.messages)
    messagesChars += typeof m.content === "string" ? m.content.length : messageChars({ content: m.content });
  const chars = prefixChars + messagesChars;
  return {
    chars,
    prefixChars,
    messageChars: messagesChars,
    tokens: Math.ceil(chars / settings.charsPerToken),
    budgetTokens: settings.contextWindowTokens - settings.outputReserveTokens,
    charsPerToken: settings.charsPerToken,
    messages: request.messages.length,
  };
}
