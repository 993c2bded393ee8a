/**
 * Decides what the offline model says: an HTTP error, a summary, or assistant content with a stop
 * reason, laid out under max_tokens and the context window (layout.ts), its thinking sealed
 * (thinking.ts).
 *
 * Tool calls: a `@tool` line produces a tool_use block even when NAME is not in the request's
 * `tools` list. We chose this on purpose: the caller's tool registry is then exercised on its
 * "unknown tool" path, exactly as when a real model hallucinates a tool name. tool_choice shapes
 * them, on a prompt and after tool results alike (chosenCalls): `none` suppresses them; `tool` keeps
 * only the calls to its `name`, or calls it with `{}` when there are none; `any` with no call calls
 * the first custom tool with `{}`; `disable_parallel_tool_use: true` keeps only the first call. A
 * forced choice's reply starts with its calls (no text before them).
 */
import type { Directives, ModelErrorStatus, RefusalCategory, StreamErrorType, ToolCallDirective } from "./directives";
import { stripDirectives } from "./directives";
import { idFrom } from "./hash";
import { layOut, type Part } from "./layout";
import type { ModelProfile } from "./model";
import { prose, quoteReply, toolResultsReply } from "./reply";
import {
  citedAnswer,
  hitsOf,
  overLimit,
  serverTool,
  serverToolCounts,
  webFetch,
  webSearch,
  withinMaxUses,
} from "./server-tools";
import { summarize, summarizeOptions } from "./summarize";
import { asksForTitle, offlineTitle } from "./title";
import { type Chain, reasoningTokens, sealReply, thinkingMode, type ThinkingMode } from "./thinking";
import { textTokens } from "./counting";
import { classifyTurn, modelErrorFor } from "./turn";
import type { WireBlock, WireRequest } from "./wire";

export type StopReason =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded";
export interface StopDetails {
  type: "refusal";
  category: RefusalCategory | null;
  explanation: string | null;
}

export interface GenerateInput {
  request: WireRequest;
  body: Record<string, unknown>;
  model: ModelProfile;
  messageId: string;
  retryCount: number;
  inputTokens: number;
  chain: Chain;
}

export type Generation =
  | { kind: "error"; status: ModelErrorStatus }
  | {
      kind: "message";
      content: WireBlock[];
      stopReason: StopReason;
      /** The request's stop sequence the reply stopped at (stop reason "stop_sequence"). */
      stopSequence: string | null;
      stopDetails: StopDetails | null;
      outputTokens: number;
      thinkingTokens: number;
      serverToolUse: { web_search_requests: number; web_fetch_requests: number } | null;
      streamError: { type: StreamErrorType; after: number; attempts: number | null } | null;
      holdAfter: number | null;
      paceMs: number | null;
    };

const REFUSAL_EXPLANATION = "The offline model was asked to refuse this request (@stop refusal).";

interface Plan {
  parts: Part[];
  forcedStop: StopReason | null;
  stopDetails: StopDetails | null;
  directives: Directives | null;
}

export function generate(input: GenerateInput): Generation {
  const { request, body, model } = input;
  const summary = summarizeOptions(request);
  const title = summary === null && asksForTitle(request);
  // A title request is a side call like a summary: only `summarize` error lines fail it.
  const failure = modelErrorFor(request.messages, summary !== null || title, input.retryCount);
  if (failure !== null) return { kind: "error", status: failure };
  const mode = thinkingMode(body, model);
  const plan = title
    ? titlePlan(offlineTitle(request), mode, model.tokenizerRatio)
    : planReply(input, mode, summary !== null ? summarize(request, summary) : null);
  const windowLeft = Math.max(0, model.contextWindow - input.inputTokens);
  const budget = Math.min(request.max_tokens, windowLeft);
  const layout = layOut(plan.parts, budget, model.tokenizerRatio);
  const stopped = atStopSequence(layout.content, body.stop_sequences);
  const laid = stopped ? stopped.content : layout.content;
  const hasTool = laid.some((block) => block.type === "tool_use");
  const stopReason: StopReason = stopped
    ? "stop_sequence"
    : layout.cut
      ? request.max_tokens <= windowLeft
        ? "max_tokens"
        : "model_context_window_exceeded"
      : (plan.forcedStop ?? (hasTool ? "tool_use" : "end_turn"));
  const content = sealReply(laid, input.chain, model);
  const counts = serverToolCounts(content);
  const defines = serverTool(request.tools, "web_search") || serverTool(request.tools, "web_fetch");
  return {
    kind: "message",
    content,
    stopReason,
    stopSequence: stopped?.sequence ?? null,
    stopDetails: stopReason === "refusal" ? plan.stopDetails : null,
    outputTokens: Math.max(1, layout.outputTokens - (stopped ? textTokens(stopped.dropped, model.tokenizerRatio) : 0)),
    thinkingTokens: layout.thinkingTokens,
    serverToolUse: defines ? counts : null,
    streamError: plan.directives?.streamError ?? null,
    holdAfter: plan.directives?.holdAfter ?? null,
    paceMs: plan.directives?.paceMs ?? null,
  };
}

/**
 * The reply cut where it first generates one of the request's `stop_sequences` (the sequence itself
 * not included, and nothing after it), with the sequence and the text dropped; null when it generates
 * none. Source: the pinned SDK's StopReason ("stop_sequence: one of your provided custom
 * stop_sequences was generated") and MessageCreateParams.stop_sequences.
 */
function atStopSequence<B extends { type: string; text?: unknown }>(
  content: B[],
  sequences: unknown,
): { content: B[]; sequence: string; dropped: string } | null {
  const wanted = Array.isArray(sequences)
    ? sequences.filter((s): s is string => typeof s === "string" && s !== "")
    : [];
  if (!wanted.length) return null;
  for (const [i, block] of content.entries()) {
    if (block.type !== "text" || typeof block.text !== "string") continue;
    const text = block.text;
    const hits = wanted.map((s) => ({ s, at: text.indexOf(s) })).filter((h) => h.at >= 0);
    if (!hits.length) continue;
    const first = hits.reduce((a, b) => (b.at < a.at ? b : a));
    const kept = text.slice(0, first.at);
    const rest = content.slice(i + 1).map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : ""));
    return {
      content: [...content.slice(0, i), ...(kept ? [{ ...block, text: kept }] : [])],
      sequence: first.s,
      dropped: text.slice(first.at) + rest.join(""),
    };
  }
  return null;
}

const textPart = (text: string): Part[] => (text === "" ? [] : [{ kind: "text", block: { type: "text", text } }]);

function thinkingPart(
  mode: ThinkingMode,
  { seed, summary, ratio }: { seed: string; summary: string; ratio: number },
): Part[] {
  if (!mode.on) return [];
  return [
    {
      kind: "thinking",
      draft: {
        type: "thinking",
        summary,
        tokens: reasoningTokens(seed, mode, textTokens(summary, ratio)),
        visible: mode.display === "summarized",
      },
    },
  ];
}

/** The note written before tool calls: a progress-update thinking block, or plain text. */
function notePart(note: string, mode: ThinkingMode, ratio: number): Part[] {
  if (note === "") return [];
  if (!mode.progressBlocks) return textPart(note);
  return [
    {
      kind: "thinking",
      progress: true,
      draft: { type: "thinking", summary: note, tokens: textTokens(note, ratio), visible: mode.progressText },
    },
  ];
}

type ToolChoiceSent = { type?: unknown; name?: unknown; disable_parallel_tool_use?: unknown } | undefined;

/**
 * The calls a reply makes under the request's tool_choice. Source: the pinned SDK's ToolChoice*
 * (ToolChoiceTool: "The model will use the specified tool with `tool_choice.name`"; ToolChoiceAny:
 * "The model will use any available tools"; disable_parallel_tool_use: "the model will output at
 * most one tool use" (auto), "exactly one tool use" (any, tool)).
 */
function chosenCalls(
  calls: readonly ToolCallDirective[],
  { choice, tools }: { choice: ToolChoiceSent; tools: WireRequest["tools"] },
): ToolCallDirective[] {
  if (choice?.type === "none") return [];
  let kept = [...calls];
  if (choice?.type === "tool" && typeof choice.name === "string") {
    const name = choice.name;
    kept = kept.filter((call) => call.name === name);
    if (kept.length === 0) kept = [{ name, input: {} }];
  } else if (choice?.type === "any" && kept.length === 0) {
    const first = (tools ?? []).find((tool) => tool.type === undefined || tool.type === null || tool.type === "custom");
    if (first?.name) kept = [{ name: first.name, input: {} }];
  }
  return choice?.disable_parallel_tool_use === true ? kept.slice(0, 1) : kept;
}

const forcing = (choice: ToolChoiceSent) => choice?.type === "any" || choice?.type === "tool";

function toolUses(calls: readonly ToolCallDirective[], messageId: string): Part[] {
  return calls.map((call, i) => ({
    kind: "tool",
    block: {
      type: "tool_use",
      id: `toolu_${idFrom(`${messageId}:${i}`)}`,
      name: call.name,
      input: call.input,
      caller: { type: "direct" },
    },
  }));
}

const lead = (calls: readonly ToolCallDirective[]) =>
  `Calling ${calls.length} ${calls.length === 1 ? "tool" : "tools"}: ${calls.map((t) => t.name).join(", ")}.`;
const quote = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 100);

function titlePlan(title: string, mode: ThinkingMode, ratio: number): Plan {
  return {
    parts: [
      ...thinkingPart(mode, { seed: title, summary: "Naming the conversation from its first exchange.", ratio }),
      ...textPart(title),
    ],
    forcedStop: null,
    stopDetails: null,
    directives: null,
  };
}

function planReply(input: GenerateInput, mode: ThinkingMode, summaryText: string | null): Plan {
  const { request, model, messageId } = input;
  const ratio = model.tokenizerRatio;
  const plan: Plan = { parts: [], forcedStop: null, stopDetails: null, directives: null };
  if (summaryText !== null) {
    plan.parts = [
      ...thinkingPart(mode, {
        seed: summaryText,
        summary: "Summarizing the conversation under the requested headings.",
        ratio,
      }),
      ...textPart(summaryText),
    ];
    return plan;
  }
  const turn = classifyTurn(request.messages);
  const choice = request.tool_choice as ToolChoiceSent;
  if (turn.kind === "tool-results") {
    const report = toolResultsReply(turn.results);
    const calls = chosenCalls(turn.nextCalls, { choice, tools: request.tools });
    const thought = `Reading ${turn.results.length} tool ${turn.results.length === 1 ? "result" : "results"} before replying.`;
    plan.parts = [...thinkingPart(mode, { seed: `${report}:${turn.userText}`, summary: thought, ratio })];
    if (calls.length === 0) plan.parts.push(...textPart(report));
    // A forced choice: the reply starts with the call, as on a prompt (planPrompt).
    else if (forcing(choice)) plan.parts.push(...toolUses(calls, messageId));
    else
      plan.parts.push(
        ...notePart(`${report}\n\nNext: ${calls.length} more ${calls.length === 1 ? "call" : "calls"}.`, mode, ratio),
        ...toolUses(calls, messageId),
      );
    return plan;
  }
  if (turn.kind === "resume") {
    const hits = hitsOf(turn.paused);
    const call = turn.paused.findLast((block) => block.type === "server_tool_use");
    const query = String(
      (call?.input as { query?: unknown; url?: unknown } | undefined)?.query ??
        (call?.input as { url?: unknown } | undefined)?.url ??
        "",
    );
    plan.parts = [
      ...thinkingPart(mode, {
        seed: `resume:${turn.userText}`,
        summary: "Finishing the answer from the results so far.",
        ratio,
      }),
    ];
    plan.parts.push(
      ...(hits.length > 0
        ? citedAnswer(query, hits).map((block) => ({ kind: "text", block }) as Part)
        : textPart(`Done with ${query || "the lookup"}.`)),
    );
    return plan;
  }
  if (turn.kind === "continuation") {
    const text = quoteReply(stripDirectives(turn.userText));
    plan.parts = [
      ...thinkingPart(mode, { seed: `continue:${turn.userText}`, summary: "Continuing the interrupted reply.", ratio }),
      ...textPart(text),
    ];
    return plan;
  }
  return planPrompt(input, { mode, userText: turn.text, directives: turn.directives, plan });
}

function planPrompt(
  input: GenerateInput,
  { mode, userText, directives: d, plan }: { mode: ThinkingMode; userText: string; directives: Directives; plan: Plan },
): Plan {
  const { request, model, messageId } = input;
  const ratio = model.tokenizerRatio;
  plan.directives = d;
  const choice = request.tool_choice as ToolChoiceSent;
  let calls = chosenCalls(d.toolsPerStep === null ? d.toolCalls : d.toolCalls.slice(0, d.toolsPerStep), {
    choice,
    tools: request.tools,
  });
  const notes = [...d.notes];
  const server: Part[] = [];
  const answers: Part[] = [];
  const search = serverTool(request.tools, "web_search");
  const fetcher = serverTool(request.tools, "web_fetch");
  d.webSearches.forEach((query, n) => {
    if (!search)
      return void notes.push(`@web-search ${query}: no web_search tool in the request, so no search was made.`);
    if (!withinMaxUses(search, n))
      return void server.push({
        kind: "server",
        blocks: overLimit("web_search", { input: { query }, replyId: messageId, n }),
      });
    const found = webSearch(query, { tool: search, replyId: messageId, n });
    server.push({ kind: "server", blocks: found.blocks });
    answers.push(...citedAnswer(query, found.hits).map((block) => ({ kind: "text", block }) as Part));
  });
  d.webFetches.forEach((url, n) => {
    if (!fetcher)
      return void notes.push(`@web-fetch ${url}: no web_fetch tool in the request, so nothing was fetched.`);
    if (!withinMaxUses(fetcher, n))
      return void server.push({
        kind: "server",
        blocks: overLimit("web_fetch", { input: { url }, replyId: messageId, n }),
      });
    const fetched = webFetch(url, { tool: fetcher, replyId: messageId, n });
    server.push({ kind: "server", blocks: fetched.blocks });
    answers.push(...textPart(`Fetched ${url}: "${quote(fetched.text)}…"`));
  });

  const pausing = d.stop?.kind === "pause_turn";
  if (pausing && !search && !fetcher) notes.push("@stop pause_turn ignored: no server tool in the request.");
  else if (pausing && server.length === 0) {
    const found = search
      ? webSearch(quote(stripDirectives(userText)) || "query", { tool: search, replyId: messageId, n: 0 })
      : webFetch("https://example.com/", { tool: fetcher!, replyId: messageId, n: 0 });
    server.push({ kind: "server", blocks: found.blocks });
  }
  const stripped = stripDirectives(userText).trim();
  const thought = `Considering the request: "${quote(stripped || userText)}". ${calls.length ? `Plan: call ${calls.map((c) => c.name).join(", ")}.` : "Plan: reply directly."}`;
  plan.parts.push(...thinkingPart(mode, { seed: userText, summary: thought, ratio }));
  if (mode.on && d.redactedThinking)
    plan.parts.push({
      kind: "thinking",
      draft: { type: "redacted_thinking", summary: "", tokens: 48, visible: false },
    });

  if (pausing && server.length > 0) {
    plan.parts.push(...server);
    plan.forcedStop = "pause_turn";
    return plan;
  }
  plan.parts.push(...server, ...answers);
  if (d.maxTokensStopThinking && mode.on) {
    plan.parts = plan.parts.filter((part) => part.kind === "thinking");
    plan.forcedStop = "max_tokens";
    return plan;
  }
  const forced =
    d.maxTokensStop || d.maxTokensStopThinking
      ? "max_tokens"
      : d.stop?.kind === "model_context_window_exceeded"
        ? "model_context_window_exceeded"
        : null;
  // A refusal `model=` names comes from that model only: another (a fallback) answers.
  const refuses = d.stop?.kind === "refusal" && (!d.stop.model || d.stop.model === input.request.model);
  if (forced || refuses) calls = []; // a cut-off or refused reply never carries finished tool calls
  const main =
    d.replyChars !== null
      ? prose(d.replyChars, userText)
      : calls.length > 0 || answers.length > 0
        ? ""
        : quoteReply(stripped || userText);
  if (refuses && d.stop?.kind === "refusal") {
    const words = main.split(" ");
    plan.parts.push(...textPart(words.slice(0, Math.max(1, Math.ceil(words.length / 2))).join(" ")));
    plan.forcedStop = "refusal";
    plan.stopDetails = { type: "refusal", category: d.stop.category, explanation: REFUSAL_EXPLANATION };
    return plan;
  }
  if (calls.length === 0 || d.replyChars !== null) {
    plan.parts.push(...textPart([main, ...notes].filter(Boolean).join("\n\n")));
  } else if (forcing(choice)) {
    // A forced choice: the reply starts with the call (Haiku 5.5 migration guide); only notes stay text.
    plan.parts.push(...textPart(notes.join("\n\n")));
  } else if (mode.progressBlocks) {
    plan.parts.push(...textPart(notes.join("\n\n")), ...notePart(lead(calls), mode, ratio));
  } else {
    plan.parts.push(...textPart([lead(calls), ...notes].join("\n\n")));
  }
  plan.parts.push(...toolUses(calls, messageId));
  plan.forcedStop = forced;
  return plan;
}
