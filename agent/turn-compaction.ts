// The compactor inside a turn: decides when a pass is due, runs it over the request's messages
// (in memory only), asks the model for the turn's state with a capped input (a deterministic
// fallback if that call fails), injects the state with a continuation nudge (in place of an earlier
// pass's), and keeps the compacted messages standing in for their originals for the rest of the
// turn. A pass that cuts nothing changes nothing: no state call, no nudge; nor does a pass whose cut
// would not pay for a note (it saves no more than the deterministic state's), or whose request,
// note and all, would not come out smaller than before; a model state longer than the cut saved
// gives way to the deterministic one. Where each copied block is stored
// is kept across passes, so every label names the call that restores its block. A stopped turn's
// signal cancels the state call (none is made once it has fired): the deterministic state stands in.
import type Anthropic from "@anthropic-ai/sdk";
import {
  budgetTokens,
  compactMessages,
  contentFingerprint,
  continuationNudge,
  effectiveTokens,
  fallbackTurnState,
  isTurnState,
  requestChars,
  shouldCompact,
  turnStateSystemPrompt,
  untouchedIds,
  withRemainingIds,
  type BlockOrigin,
  type CompactionBudget,
  type CompactionReport,
} from "../core/compactor";
import { excerpt } from "../core/fold";
import { cacheable, storedBlockOf } from "../core/replay";
import { sliceWhole } from "../core/text-cut";
import { renderMessageText } from "../core/render";
import type { ModelEntry } from "../core/models/catalog";
import { catalogEntry } from "../core/models/lookup";
import { summarizationParams } from "../core/model-params";
import {
  addUsage,
  zeroUsage,
  type CacheControl,
  type ContentBlock,
  type ModelRequest,
  type StoredMessage,
  type Usage,
  type WireMessage,
} from "../core/types";
import { billedUsage } from "./model-reply";

const SUMMARY_INPUT_CHARS = 60_000;
const SUMMARY_MAX_CHARS = 3_000;
/** Room for the state's text: SUMMARY_MAX_CHARS at a conservative 2 chars per token. */
const SUMMARY_MAX_TOKENS = 1_536;
const withoutCache = (ms: readonly WireMessage[]) =>
  JSON.stringify(ms, (k, v) => (k === "cache_control" ? undefined : v));
type Breakpoint = NonNullable<CacheControl["cache_control"]>;
/** The cache_control a message's block carries (the build puts at most one on a message). */
const breakpointOf = (m: WireMessage | undefined): Breakpoint | undefined => {
  if (!m || typeof m.content === "string") return undefined;
  for (const b of m.content) if ("cache_control" in b && b.cache_control) return b.cache_control as Breakpoint;
  return undefined;
};
/** The message with no block carrying cache_control; blocks without one are kept as they are. */
function withoutBreakpoints(m: WireMessage): WireMessage {
  if (typeof m.content === "string" || !m.content.some((b) => "cache_control" in b)) return m;
  return {
    ...m,
    content: m.content.map((b) => {
      if (!("cache_control" in b)) return b;
      const { cache_control: _c, ...rest } = b as ContentBlock & { cache_control?: unknown };
      return rest as ContentBlock;
    }),
  };
}

/**
 * Where each block of `messages` is stored, by identity: replayed requests carry the stored block
 * objects (or a breakpoint's copy, which names the block it copies), so a truncation label can name
 * the conversation_read call that restores the block.
 */
export function blockOrigins(
  conversationId: string,
  messages: readonly StoredMessage[],
): (block: ContentBlock) => BlockOrigin | undefined {
  const refs = new WeakMap<ContentBlock, BlockOrigin>();
  for (const m of messages) m.content.forEach((b, block) => refs.set(b, { conversationId, messageId: m.id, block }));
  return (b) => refs.get(b) ?? refs.get(storedBlockOf(b));
}

/** The messages without an earlier pass's <turn_state> (a new pass's state replaces it); the same array when there is none. */
function withoutTurnState(messages: readonly WireMessage[]): readonly WireMessage[] {
  const has = (m: WireMessage) => typeof m.content !== "string" && m.content.some(isTurnState);
  if (!messages.some(has)) return messages;
  return messages.map((m) =>
    has(m) ? { ...m, content: (m.content as ContentBlock[]).filter((b) => !isTurnState(b)) } : m,
  );
}

/**
 * Where the turn's own task prompt is in `messages` (its words are never cut): the message holding
 * a block stored in the turn's first message, else the last one holding its words.
 */
function taskPromptIndex(
  messages: readonly WireMessage[],
  prompt: StoredMessage | undefined,
  originOf: (b: ContentBlock) => BlockOrigin | undefined,
): number | undefined {
  if (prompt?.role !== "user") return undefined;
  const blocks = (m: WireMessage) => (typeof m.content === "string" ? [] : m.content);
  let at = messages.findLastIndex((m) => blocks(m).some((b) => originOf(b)?.messageId === prompt.id));
  if (at < 0) {
    const words = prompt.content.find((b) => b.type === "text")?.text;
    if (words)
      at = messages.findLastIndex(
        (m) =>
          m.role === "user" && (m.content === words || blocks(m).some((b) => b.type === "text" && b.text === words)),
      );
  }
  return at < 0 ? undefined : at;
}

export interface CompactionOutcome {
  request: ModelRequest;
  report: CompactionReport;
  /** How the state was written: "fallback" too when the pass changed nothing (and so made no state call, or left its state out). */
  summarized: "model" | "fallback";
  durationMs: number;
  /** What the state call cost (zero when it failed before an answer). */
  usage: Usage;
}

/** What one pass is given besides the request and the turn's messages. */
export interface PassOptions {
  /** The turn's stop: it cancels the state call, and none is made once it has fired. */
  signal?: AbortSignal;
}

/** What the state call (or the deterministic state) is written from. */
interface StateInput {
  task: string;
  calls: Extract<ContentBlock, { type: "tool_use" }>[];
  /** Ids the task names that no call has touched yet: REMAINING always lists them. */
  pending: string[];
  /** The state call's capped input ("" when there is nothing to summarize). */
  input: string;
}

function stateInput(turn: readonly StoredMessage[]): StateInput {
  const task = turn[0] ? renderMessageText(turn[0]) : "";
  const calls = turn.flatMap((m) =>
    m.content.filter((b): b is Extract<ContentBlock, { type: "tool_use" }> => b.type === "tool_use"),
  );
  const pending = untouchedIds(task, calls);
  const per = Math.max(300, Math.floor(SUMMARY_INPUT_CHARS / Math.max(1, turn.length)));
  let body = pending.length ? `[ids the task names that no call has touched yet: ${pending.join(", ")}]\n\n` : "";
  for (const m of turn) {
    const entry = `[seq ${m.seq} ${m.role}]\n${excerpt(renderMessageText(m), per)}\n\n`;
    if (body.length + entry.length > SUMMARY_INPUT_CHARS) break;
    body += entry;
  }
  return { task, calls, pending, input: body || task };
}

const deterministicState = (s: StateInput) =>
  fallbackTurnState(
    s.task,
    s.calls.map((c) => ({ name: c.name, input: c.input })),
  );

/**
 * The most chars a pass's note can add: the nudge around the longest state either way (the model's,
 * capped, with REMAINING's ids added; or the deterministic one).
 */
function noteMaxChars(s: StateInput): number {
  const longestModelState = withRemainingIds("x".repeat(SUMMARY_MAX_CHARS), s.pending);
  return Math.max(continuationNudge(longestModelState).length, continuationNudge(deterministicState(s)).length);
}

/** The provider's count for the conversation's last call and that request's chars (its prompt snapshot's). */
export interface CarriedCount {
  reportedTokens: number;
  chars: number;
  /**
   * What the count was measured over: that request's first `messages` messages and their
   * contentFingerprint. The count holds for a request that starts with the same content; absent,
   * the caller vouches that it does.
   */
  over?: { messages: number; prefix: string };
}

/** The last call as its prompt snapshot records it; `prefix` null on a snapshot that predates it. */
interface LastCall {
  chars: number;
  reportedTokens: number | null;
  messages?: number;
  prefix?: string | null;
}

/**
 * What the conversation's last call (`last`, its newest prompt snapshot) tells the next turn's
 * first: its provider count, when it has one and was counted by the model asked now (the last
 * reply's model): another model's tokenizer counts the same request differently, and its figure
 * would only force a pass this model may not need. A snapshot that does not record what it was
 * measured over (one written before it did) carries nothing.
 */
export function carriedCount(
  last: LastCall | undefined,
  history: readonly StoredMessage[],
  model: ModelEntry,
): CarriedCount | null {
  if (!last || last.reportedTokens === null || last.prefix === null) return null;
  const by = history.findLast((m) => m.role === "assistant" && m.model)?.model;
  if (!by || (by !== model.id && catalogEntry(by)?.id !== model.id)) return null;
  const over =
    last.prefix !== undefined && last.messages !== undefined
      ? { messages: last.messages, prefix: last.prefix }
      : undefined;
  return { reportedTokens: last.reportedTokens, chars: last.chars, over };
}

export class TurnCompactor {
  private override: { prefix: string; count: number; messages: WireMessage[] } | null = null;
  /** The last request apply() was given, as built: what a compaction stands in for. */
  private lastBuilt: ModelRequest | null = null;
  private calibration: { reportedTokens: number; estimateAtReport: number } | null = null;
  /** A carried calibration's condition, checked against the first request it is used for (seeded). */
  private carriedOver: CarriedCount["over"] | null = null;
  /** Where the blocks earlier passes copied are stored: the stored block's own origin. */
  private readonly copies = new WeakMap<ContentBlock, BlockOrigin>();
  private lastPassCutNothing = false;

  constructor(
    private budget: CompactionBudget,
    private readonly client: Anthropic,
    /** The model the turn asks now (a refusal fallback's, after one): its state calls go there. */
    private readonly model: ModelEntry | (() => ModelEntry),
    private readonly originOf: () => (block: ContentBlock) => BlockOrigin | undefined,
  ) {}

  private activeModel(): ModelEntry {
    return typeof this.model === "function" ? this.model() : this.model;
  }

  /** Whether a compaction currently stands in for part of the turn's messages. */
  get active(): boolean {
    return this.override !== null;
  }

  /**
   * Whether the last pass changed nothing (it cut nothing, or too little to pay for its note):
   * another pass over the same request would free nothing either.
   */
  get fruitless(): boolean {
    return this.lastPassCutNothing;
  }

  /** The request with earlier compactions still standing in for what they replaced. */
  /** After an overflow taught the real window, replies are bounded by its reserve too. */
  private bounded(request: ModelRequest): ModelRequest {
    return request.max_tokens > this.budget.outputReserveTokens
      ? { ...request, max_tokens: this.budget.outputReserveTokens }
      : request;
  }

  apply(built: ModelRequest): ModelRequest {
    const request = this.bounded(built);
    this.lastBuilt = request;
    const o = this.override;
    if (!o) return request;
    if (withoutCache(request.messages.slice(0, o.count)) !== o.prefix) {
      this.override = null; // the prefix moved under the turn (a fold landed): start afresh
      return request;
    }
    // The standing messages carry the breakpoints this build places on the messages they stand in
    // for (the previous request's last message, the summary acknowledgement), as many as it places:
    // without the first, a step adding more than 20 blocks finds nothing within the cache's 20-block
    // lookback of its last message and writes the whole prefix again.
    const standing = o.messages.map((m, i) => {
      const mark = breakpointOf(request.messages[i]);
      return mark ? this.withBreakpoint(m, mark) : m;
    });
    return { ...request, messages: [...standing, ...request.messages.slice(o.count)] };
  }

  /**
   * A standing message with a breakpoint where the build puts one: on its last block that may carry
   * one, but for a pass's turn state (the next pass replaces it, and the breakpoint would go with
   * it; the block before it is where the pass's own request put its breakpoint). The copy keeps
   * where its block is stored.
   */
  private withBreakpoint(m: WireMessage, mark: Breakpoint): WireMessage {
    if (typeof m.content === "string") return m;
    const blocks = m.content;
    let at = blocks.findLastIndex((b) => cacheable(b) && !isTurnState(b));
    if (at < 0) at = blocks.findLastIndex(cacheable);
    if (at < 0) return m;
    const copy = { ...blocks[at], cache_control: mark } as ContentBlock;
    const origin = this.copies.get(blocks[at]);
    if (origin) this.copies.set(copy, origin);
    return { ...m, content: blocks.map((b, j) => (j === at ? copy : b)) };
  }

  estimate(request: ModelRequest): number {
    return Math.ceil(requestChars(request) / this.budget.charsPerToken);
  }

  /** The tokens the next call is taken to be: the estimate, or the provider's count plus growth. */
  effective(request: ModelRequest): number {
    this.checkCarried(request);
    return effectiveTokens(this.estimate(request), this.calibration);
  }

  /**
   * A carried count stands only for a request that starts with the content it was measured over.
   * A stub batch or a fold between the turns replaces that content, and what the count held that
   * the chars barely see (an image weighs only its label in the estimate: core/render.ts) would be
   * carried in full, or scaled by chars that hardly moved, forcing a pass the request does not
   * need: the turn then starts uncalibrated, as it would without a count.
   */
  private checkCarried(request: ModelRequest): void {
    const over = this.carriedOver;
    if (!over) return;
    this.carriedOver = null;
    const same =
      request.messages.length >= over.messages &&
      contentFingerprint(request.messages.slice(0, over.messages)) === over.prefix;
    if (!same) this.calibration = null;
  }

  due(request: ModelRequest): boolean {
    return shouldCompact(this.effective(request), this.budget);
  }

  get budgetTokens(): number {
    return budgetTokens(this.budget);
  }

  /**
   * After an overflow 400 that names its figures: the model's real window is M (the settings
   * overstated it) and it counted N tokens where the estimate saw fewer. For the rest of the turn
   * the budget uses that window (output reserve at most a quarter of it) and that chars-per-token,
   * so the forced pass aims under what the provider will actually accept.
   */
  learnFromOverflow(request: ModelRequest, promptTokens: number, maxTokens: number): void {
    const window = Math.min(this.budget.contextWindowTokens, maxTokens);
    const reserve = Math.min(this.budget.outputReserveTokens, Math.floor(window / 4));
    const observed = requestChars(request) / Math.max(1, promptTokens);
    this.budget = {
      ...this.budget,
      contextWindowTokens: window,
      outputReserveTokens: reserve,
      charsPerToken: Math.min(this.budget.charsPerToken, observed),
    };
    this.calibration = null;
    this.carriedOver = null;
  }

  /** After each call: what the provider counted for the request it was sent. */
  calibrate(request: ModelRequest, reportedTokens: number): void {
    this.calibration = { reportedTokens, estimateAtReport: this.estimate(request) };
    this.carriedOver = null;
  }

  /**
   * The turn's first call calibrated by the conversation's last one (carriedCount): the provider's
   * count for it, against that request's size at this budget's chars per token, when the first
   * request starts with what it was measured over (checkCarried). The in-turn calibration replaces
   * it after the first call.
   */
  seeded(carried: CarriedCount | null): this {
    if (carried) {
      this.calibration = {
        reportedTokens: carried.reportedTokens,
        estimateAtReport: Math.ceil(carried.chars / this.budget.charsPerToken),
      };
      this.carriedOver = carried.over ?? null;
    }
    return this;
  }

  async compact(
    request: ModelRequest,
    turnMessages: readonly StoredMessage[],
    options: PassOptions = {},
  ): Promise<CompactionOutcome> {
    const started = Date.now();
    const fixed = requestChars({ ...request, messages: [] });
    const stored = this.originOf();
    const originOf = (b: ContentBlock) => this.copies.get(b) ?? stored(b);
    const input = withoutTurnState(request.messages);
    // The note rides the request the pass sends: the cut makes room for the largest it can be, or,
    // when the prefix leaves no such room (a small window), cuts what it can without it.
    const state = stateInput(turnMessages);
    const cut = (room: number) =>
      compactMessages(input, {
        fixedChars: fixed + room,
        budget: this.budget,
        originOf,
        taskPrompt: taskPromptIndex(input, turnMessages[0], originOf),
      });
    let pass = cut(noteMaxChars(state));
    if (!pass.report.targets.length) pass = cut(0);
    const { messages, report, origins } = pass;
    // The card's figures are the requests as sent: before, with an earlier pass's state note if it
    // carries one; after, with this pass's.
    const tokensOf = (chars: number) => Math.ceil(chars / this.budget.charsPerToken);
    const charsBefore = requestChars(request);
    const tokensBefore = tokensOf(charsBefore);
    /** The request as it was: the pass is fruitless (another over the same request would be too). */
    const unchanged = (usage: Usage): CompactionOutcome => {
      this.lastPassCutNothing = true;
      return {
        request: this.bounded(request),
        report: {
          ...report,
          targets: [],
          charsBefore,
          tokensBefore,
          charsAfter: charsBefore,
          tokensAfter: tokensBefore,
          tokensSaved: 0,
        },
        summarized: "fallback",
        durationMs: Date.now() - started,
        usage,
      };
    };
    // Nothing cut, or a cut that does not pay for the note it would carry: the request stays as it
    // was, with no state call. A note on a request that did not shrink would only add to it (one
    // that fit could overflow, and one that was due would stay due).
    const saved = charsBefore - requestChars({ ...request, messages });
    if (!report.targets.length || saved <= continuationNudge(deterministicState(state)).length)
      return unchanged(zeroUsage());
    this.lastPassCutNothing = false;
    const written = await this.turnState(state, options.signal);
    const { usage } = written;
    let { summarized, state: stateText } = written;
    // A model state longer than the cut paid for: the deterministic one (which it pays for) stands in.
    if (continuationNudge(stateText).length >= saved) {
      stateText = deterministicState(state);
      summarized = "fallback";
    }
    // The state rides the last user message: after its tool results (which must lead a carrier),
    // or before the prompt's own words when the turn has no tool results yet.
    const last = messages.map((m) => m.role).lastIndexOf("user");
    if (last >= 0) {
      const blocks = messages[last].content as ContentBlock[];
      const nudge: ContentBlock = { type: "text", text: continuationNudge(stateText) };
      if (blocks.some((b) => b.type === "tool_result")) blocks.push(nudge);
      else blocks.unshift(nudge);
    }
    // The note and all, the request must come out smaller, or the pass is not installed (what the
    // state call cost is still reported).
    const charsAfter = requestChars({ ...request, messages });
    const tokensAfter = tokensOf(charsAfter);
    if (tokensAfter >= tokensBefore) return unchanged(usage);
    // What it stands in for is the request as built, not one an earlier pass already rewrote: the
    // next step's fresh build must match it, or this pass would be dropped at the next step. (A
    // request of another length, one the thinking guard shortened, is its own reference.)
    const built = this.lastBuilt?.messages.length === request.messages.length ? this.lastBuilt : request;
    // Without this call's cache breakpoints (apply() puts back those each later build places on
    // these messages, so passes never pile theirs up); every copy is kept
    // with where its block is stored, so a later pass still names the call that restores it.
    const standing = messages.map(withoutBreakpoints);
    for (const [copy, origin] of origins) this.copies.set(copy, origin);
    standing.forEach((m, i) =>
      (m.content as ContentBlock[]).forEach((b, j) => {
        const origin = origins.get((messages[i].content as ContentBlock[])[j]);
        if (origin) this.copies.set(b, origin);
      }),
    );
    this.override = { prefix: withoutCache(built.messages), count: built.messages.length, messages: standing };
    // The next calibration comes from the next call; the old one described the uncompacted request.
    this.calibration = null;
    return {
      request: this.bounded({ ...request, messages }),
      report: {
        ...report,
        charsBefore,
        tokensBefore,
        charsAfter,
        tokensAfter,
        tokensSaved: tokensBefore - tokensAfter,
      },
      summarized,
      durationMs: Date.now() - started,
      usage,
    };
  }

  /**
   * One model call over the turn's saved originals, its input capped so it cannot overflow itself;
   * `signal` (the turn's stop) cancels it, and none is made once it has fired.
   */
  private async turnState(
    s: StateInput,
    signal?: AbortSignal,
  ): Promise<{ state: string; summarized: "model" | "fallback"; usage: Usage }> {
    let usage = zeroUsage();
    const { input, pending } = s;
    try {
      // Nothing to summarize (an empty turn): no call, whose blank message the API would refuse.
      if (!input.trim()) throw new Error("nothing to summarize");
      // A stopped turn asks the model nothing more.
      if (signal?.aborted) throw new Error("the turn was stopped");
      // The least thinking the model allows, with room for it: thinking counts against max_tokens.
      const model = this.activeModel();
      const reply = await this.client.messages.create(
        {
          model: model.id,
          ...summarizationParams(model, SUMMARY_MAX_TOKENS),
          system: turnStateSystemPrompt(SUMMARY_MAX_CHARS),
          // Raw turn text (tool outputs among it): well-formed, as a turn's own request is.
          messages: [{ role: "user", content: input.toWellFormed() }],
        } as Anthropic.MessageCreateParamsNonStreaming,
        signal ? { signal } : undefined,
      );
      usage = addUsage(usage, billedUsage(reply, model));
      // A refusal's words are no turn state: the deterministic one stands in.
      if (reply.stop_reason === "refusal") throw new Error("the model refused the turn state");
      const state = sliceWhole(
        reply.content
          .map((b) => (b.type === "text" ? b.text : ""))
          .join("")
          .trim(),
        0,
        SUMMARY_MAX_CHARS,
      );
      if (state) return { state: withRemainingIds(state, pending), summarized: "model", usage };
    } catch {
      // fall through to the deterministic state
    }
    return {
      state: deterministicState(s),
      summarized: "fallback",
      usage,
    };
  }
}
