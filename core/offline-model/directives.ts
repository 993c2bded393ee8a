/**
 * Plain-text directives that let tests and demos steer the offline model from an ordinary chat
 * message. Each directive is a whole line:
 *
 *   @tool NAME {json}     call tool NAME with that input (one call per line)
 *   @reply-chars N        reply with about N characters of prose
 *   @model-error STATUS [call=N] [summarize] [attempts=K]
 *                         answer with an HTTP error: 400, 429, 500 or 529, or `overflow` (the
 *                         400 "prompt is too long" of a request past the window). By default the call
 *                         answering the prompt fails; `call=N` fails the Nth model call of the turn
 *                         instead (2 = the call after the first tool result or continuation);
 *                         `summarize` fails summarization requests whose input carries the line
 *                         (the in-turn compaction's state call, a fold) and title requests (the
 *                         automatic title after the first exchange); `attempts=K` fails only
 *                         the first K attempts of that call (the SDK's retry counter), so a retry
 *                         then succeeds, as with a transient provider error
 *   @max-tokens-stop      end the reply with stop_reason "max_tokens"
 *   @max-tokens-stop thinking
 *                         the reply is cut while thinking: only a thinking block, stop_reason
 *                         "max_tokens" (without thinking, as plain @max-tokens-stop)
 *   @tools-per-step N     issue the @tool calls N at a time, one batch per model call, as an
 *                         agent working through a list does (the next batch once the previous
 *                         one's results are in)
 *   @stop refusal [CATEGORY] [model=ID]
 *                         a little text, then stop_reason "refusal" with stop_details
 *                         {type:"refusal", category, explanation}; CATEGORY one of cyber, bio,
 *                         frontier_llm, reasoning_extraction, general_harms (none: null)
 *   @stop pause_turn      with a server tool in the request: a server tool call and its result,
 *                         then stop_reason "pause_turn"; the request that sends that reply back as
 *                         its last message gets the rest of the answer
 *   @stop model_context_window_exceeded
 *                         the reply is cut with stop_reason "model_context_window_exceeded"
 *   @redacted-thinking    with thinking on, the reply carries a redacted_thinking block too
 *   @stream-error TYPE [after=N] [attempts=K]
 *                         TYPE overloaded_error or api_error: a streamed reply answers 200, sends
 *                         about N characters of text (default 200), then an `error` event; a
 *                         non-streamed one gets the HTTP error (529 or 500). `attempts=K`: only the
 *                         first K requests with the same prompt fail, so a client's retry succeeds
 *   @hold-stream [after=N]
 *                         a streamed reply sends about N characters of text (default 0), then
 *                         holds the stream open, sending nothing more until the reader cancels it
 *                         (a stopped turn); after 5 minutes it goes on. A non-streamed reply is
 *                         not held
 *   @stream-pace MS       a streamed reply waits MS milliseconds (at most 2,000) before each text
 *                         delta: a slow model, for what happens while a turn streams on
 *   @web-search QUERY     with a web_search tool in the request: search (server_tool_use, its
 *                         web_search_tool_result) and answer with cited text
 *   @web-fetch URL        with a web_fetch tool in the request: fetch (server_tool_use, its
 *                         web_fetch_tool_result holding a text document) and answer
 *
 * Without the server tool in the request, @web-search and @web-fetch only leave a note in the text.
 * Directives are read only from the latest real user text (turn.ts says which that is) and only on
 * the call answering it, never from a continuation request or a compaction's turn state.
 */
export const MODEL_ERROR_STATUSES = [400, 429, 500, 529] as const;
/** `overflow`: the 400 "prompt is too long" a request past the window gets, whatever its size. */
export type ModelErrorStatus = (typeof MODEL_ERROR_STATUSES)[number] | "overflow";
export const REFUSAL_CATEGORIES = ["cyber", "bio", "frontier_llm", "reasoning_extraction", "general_harms"] as const;
export type RefusalCategory = (typeof REFUSAL_CATEGORIES)[number];
export type StreamErrorType = "overloaded_error" | "api_error";

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

/** `model`: the refusal comes only from that model (a fallback model then answers). */
export type StopDirective =
  | { kind: "refusal"; category: RefusalCategory | null; model?: string }
  | { kind: "pause_turn" }
  | { kind: "model_context_window_exceeded" };

export interface Directives {
  toolCalls: ToolCallDirective[];
  replyChars: number | null;
  /** The status of the first `@model-error` rule for the prompt's own call, for simple callers. */
  modelError: ModelErrorStatus | null;
  modelErrors: ModelErrorRule[];
  maxTokensStop: boolean;
  /** `@max-tokens-stop thinking`: cut while thinking. */
  maxTokensStopThinking: boolean;
  /** Issue the tool calls this many per model call; null: all at once. */
  toolsPerStep: number | null;
  stop: StopDirective | null;
  redactedThinking: boolean;
  streamError: { type: StreamErrorType; after: number; attempts: number | null } | null;
  /** `@hold-stream`: characters of text sent before the stream holds; null: never held. */
  holdAfter: number | null;
  /** `@stream-pace`: milliseconds before each streamed text delta; null: none. */
  paceMs: number | null;
  webSearches: string[];
  webFetches: string[];
  /** Human-readable problems (bad JSON, unsupported status) surfaced in the reply text. */
  notes: string[];
}

const TOOL_LINE = /^@tool\s+(\S+)(?:\s+(.*))?$/;
const REPLY_CHARS_LINE = /^@reply-chars\s+(\d+)$/;
const MODEL_ERROR_LINE = /^@model-error\s+(\d+|overflow)((?:\s+(?:call=\d+|summarize|attempts=\d+))*)$/;
const MAX_TOKENS_LINE = /^@max-tokens-stop(\s+thinking)?$/;
const TOOLS_PER_STEP_LINE = /^@tools-per-step\s+(\d+)$/;
const STOP_LINE =
  /^@stop\s+(refusal|pause_turn|model_context_window_exceeded)(?:\s+(?!model=)(\S+))?(?:\s+model=(\S+))?$/;
const REDACTED_LINE = /^@redacted-thinking$/;
const STREAM_ERROR_LINE = /^@stream-error\s+(overloaded_error|api_error)((?:\s+(?:after=\d+|attempts=\d+))*)$/;
const HOLD_LINE = /^@hold-stream(?:\s+after=(\d+))?$/;
const PACE_LINE = /^@stream-pace\s+(\d+)$/;
/** The slowest pace a prompt may ask for, so a test's typo cannot stall a stream for minutes. */
const MAX_PACE_MS = 2_000;
const WEB_SEARCH_LINE = /^@web-search\s+(.+)$/;
const WEB_FETCH_LINE = /^@web-fetch\s+(\S+)$/;
const ANY_DIRECTIVE_LINE =
  /^@(tool|reply-chars|model-error|max-tokens-stop|tools-per-step|stop|redacted-thinking|stream-error|hold-stream|stream-pace|web-search|web-fetch)\b/;

export function parseDirectives(text: string): Directives {
  const d: Directives = {
    toolCalls: [],
    replyChars: null,
    modelError: null,
    modelErrors: [],
    maxTokensStop: false,
    maxTokensStopThinking: false,
    toolsPerStep: null,
    stop: null,
    redactedThinking: false,
    streamError: null,
    holdAfter: null,
    paceMs: null,
    webSearches: [],
    webFetches: [],
    notes: [],
  };
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    let match: RegExpMatchArray | null;
    if ((match = line.match(TOOL_LINE))) {
      d.toolCalls.push(parseToolCall(match[1], match[2], d.notes));
    } else if ((match = line.match(REPLY_CHARS_LINE))) {
      d.replyChars = Number(match[1]);
    } else if ((match = line.match(MODEL_ERROR_LINE))) {
      const status = match[1] === "overflow" ? "overflow" : Number(match[1]);
      if (status === "overflow" || (MODEL_ERROR_STATUSES as readonly number[]).includes(status)) {
        const rule = modelErrorRule(status as ModelErrorStatus, match[2] ?? "");
        d.modelErrors.push(rule);
        if (rule.call === 1 && d.modelError === null) d.modelError = rule.status;
      } else d.notes.push(`@model-error ${status} ignored: supported statuses are ${MODEL_ERROR_STATUSES.join(", ")}.`);
    } else if ((match = line.match(MAX_TOKENS_LINE))) {
      if (match[1]) d.maxTokensStopThinking = true;
      else d.maxTokensStop = true;
    } else if ((match = line.match(TOOLS_PER_STEP_LINE))) {
      d.toolsPerStep = Math.max(1, Number(match[1]));
    } else if ((match = line.match(STOP_LINE))) {
      d.stop = stopDirective(match[1], { option: match[2], notes: d.notes, model: match[3] });
    } else if (REDACTED_LINE.test(line)) {
      d.redactedThinking = true;
    } else if ((match = line.match(STREAM_ERROR_LINE))) {
      const after = /after=(\d+)/.exec(match[2] ?? "")?.[1];
      const attempts = /attempts=(\d+)/.exec(match[2] ?? "")?.[1];
      d.streamError = {
        type: match[1] as StreamErrorType,
        after: after === undefined ? 200 : Number(after),
        attempts: attempts === undefined ? null : Number(attempts),
      };
    } else if ((match = line.match(HOLD_LINE))) {
      d.holdAfter = Number(match[1] ?? 0);
    } else if ((match = line.match(PACE_LINE))) {
      d.paceMs = Math.min(Number(match[1]), MAX_PACE_MS);
    } else if ((match = line.match(WEB_SEARCH_LINE))) {
      d.webSearches.push(match[1].trim());
    } else if ((match = line.match(WEB_FETCH_LINE))) {
      d.webFetches.push(match[1]);
    }
  }
  return d;
}

function stopDirective(
  kind: string,
  { option, notes, model }: { option: string | undefined; notes: string[]; model?: string },
): StopDirective {
  if (kind === "pause_turn" || kind === "model_context_window_exceeded") return { kind };
  if (option !== undefined && !(REFUSAL_CATEGORIES as readonly string[]).includes(option)) {
    notes.push(`@stop refusal ${option}: unknown category, sent null (known: ${REFUSAL_CATEGORIES.join(", ")}).`);
  }
  return {
    kind: "refusal",
    category: (REFUSAL_CATEGORIES as readonly string[]).includes(option ?? "") ? (option as RefusalCategory) : null,
    ...(model ? { model } : {}),
  };
}

function modelErrorRule(status: ModelErrorStatus, options: string): ModelErrorRule {
  const summarize = /\bsummarize\b/.test(options);
  const call = Number(/call=(\d+)/.exec(options)?.[1] ?? 1);
  const attempts = /attempts=(\d+)/.exec(options)?.[1];
  return {
    status,
    call: summarize ? null : Math.max(1, call),
    summarize,
    attempts: attempts === undefined ? null : Number(attempts),
  };
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
