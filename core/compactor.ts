// The in-turn safety net: when one turn's request grows past the trigger (tool results piling
// up), a pass shrinks the turn's in-memory messages to the target. It never writes the stored
// conversation: every truncation label names the call that returns the original.
//
// A pass: strip images from tool results the model has already looked at; truncate
// proportionally — largest tool results first, then older assistant messages, then older user
// messages — to head + tail excerpts; always protect messages[0], the turn's own task prompt, the
// last 3 messages of each role (tool results counted as their own role; a <turn_state> nudge is no
// prompt) and error results (a protected result larger than the whole target, an error's too, or
// protected results other than errors that together pass the whole budget, are still cut, to half
// the target); keep the images of results the model has not seen yet (only their text is cut);
// never separate a tool_use from its tool_result (only block contents shrink, blocks are never
// removed). A request still over the whole budget after all that (the
// overflow 400's forced pass) carries protected earlier prompts and replies as stubs of their head
// (core/stubs.ts), largest first, until it fits; the turn's own prompt never.
import type { ContentBlock, ImageBlock, ModelRequest, TextBlock, ToolUseBlock, WireMessage } from "./types";
import { fnvLanes } from "./ids";
import { messageChars, toolResultText } from "./render";
import { sliceWhole, tailWhole } from "./text-cut";
import { isOversizedStub, OVERSIZED_MIN_CHARS, oversizedStubText } from "./stubs";

export interface CompactionBudget {
  contextWindowTokens: number;
  outputReserveTokens: number;
  compactTriggerRatio: number;
  compactTargetRatio: number;
  charsPerToken: number;
}

/** Where a block is stored, so a truncation can name the call that restores it. */
export interface BlockOrigin {
  conversationId: string;
  messageId: string;
  block: number;
  /** The message's seq, when whoever placed the block knew it (a stub then names it too). */
  seq?: number;
}

export interface CompactionTarget {
  index: number;
  block: number;
  kind: "tool_result" | "assistant" | "user" | "image";
  before: number;
  after: number;
}

export interface CompactionReport {
  targets: CompactionTarget[];
  charsBefore: number;
  charsAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  tokensSaved: number;
}

export const budgetTokens = (b: CompactionBudget) => b.contextWindowTokens - b.outputReserveTokens;

export function requestChars(req: Pick<ModelRequest, "system" | "tools" | "messages">): number {
  let n = JSON.stringify(req.tools).length;
  for (const s of req.system) n += s.text.length;
  for (const m of req.messages)
    n += typeof m.content === "string" ? m.content.length : messageChars({ content: m.content });
  return n;
}

/**
 * What a request's messages hold as far as content goes, as a short fingerprint: what the provider
 * counted when it counted them. Breakpoints (cache_control) are left out (each build places its
 * own), and so are thinking blocks (a later turn's replay drops earlier turns': text the estimate
 * counts, so scaling by chars covers them); an image's data is taken by its length and ends (its
 * tokens follow its size, and a stub replacing it changes the block anyway). Two requests whose
 * first n messages have the same fingerprint carry the same content there (collisions aside).
 */
export function contentFingerprint(messages: readonly WireMessage[]): string {
  const json = JSON.stringify(messages, (k, v) => {
    if (k === "cache_control") return undefined;
    if (k === "data" && typeof v === "string" && v.length > 256) return `${v.length}:${v.slice(0, 64)}:${v.slice(-64)}`;
    if (Array.isArray(v)) return v.filter((b) => !(b && (b.type === "thinking" || b.type === "redacted_thinking")));
    return v;
  });
  // 64 bits are ample to tell one request's messages from another's.
  const [a, b] = fnvLanes(json);
  return `${a.toString(16).padStart(8, "0")}${b.toString(16).padStart(8, "0")}:${json.length}`;
}

/**
 * The effective size of the next call: the conservative chars estimate, or the provider's own
 * count for the previous call plus the estimate of what was added since, whichever is higher.
 * When the request shrank since that count (a fold landing mid-turn; thinking an earlier turn's
 * replay drops), the count is scaled down with the estimate: it described content that is gone.
 * A count from before a stub batch or a fold between turns is not carried at all (TurnCompactor
 * checkCarried): what it held that the chars barely see (images) would not scale with them.
 */
export function effectiveTokens(
  estimateTokens: number,
  calibration: { reportedTokens: number; estimateAtReport: number } | null,
): number {
  if (!calibration) return estimateTokens;
  const { reportedTokens, estimateAtReport } = calibration;
  if (estimateTokens < estimateAtReport)
    return Math.max(estimateTokens, Math.ceil((reportedTokens * estimateTokens) / Math.max(1, estimateAtReport)));
  return Math.max(estimateTokens, reportedTokens + (estimateTokens - estimateAtReport));
}

export function shouldCompact(tokens: number, b: CompactionBudget): boolean {
  return tokens > budgetTokens(b) * b.compactTriggerRatio;
}

const MIN_KEEP = 600;

/**
 * What a block weighs in the request as the pass counts it (messageChars): a tool result's images
 * too, at the short label the estimate gives them, so cutting a result that keeps its images is
 * counted for what it saves.
 */
function blockChars(b: ContentBlock): number {
  if (b.type === "text") return b.text.length;
  if (b.type === "tool_result") return toolResultText(b).length;
  return 0;
}

function truncateText(text: string, keep: number, label: string): string {
  if (text.length <= keep) return text;
  const room = Math.max(0, keep - label.length - 2);
  const head = Math.ceil(room * 0.6);
  const tail = room - head;
  return `${sliceWhole(text, 0, head)}\n${label}\n${tailWhole(text, tail)}`;
}

const readCall = (o: BlockOrigin | undefined) =>
  o
    ? `conversation_read ${JSON.stringify({ conversation_id: o.conversationId, message_id: o.messageId, block: o.block })}`
    : "the stored conversation";

const TURN_STATE_OPEN = "<turn_state>";
const TURN_STATE_LEAD =
  "The earlier steps of this turn were compacted to fit the context window; the full results are stored and the truncation labels name the calls that return them.";
const TURN_STATE_CLOSE = "</turn_state>";
/**
 * The text block a pass injects (continuationNudge): the turn's state, never a prompt of its own.
 * Told by its whole frame, not its first tag: a person (or the model) may write `<turn_state>` too.
 */
export const isTurnState = (b: ContentBlock): boolean =>
  b.type === "text" &&
  b.text.startsWith(`${TURN_STATE_OPEN}\n${TURN_STATE_LEAD}\n`) &&
  b.text.endsWith(`\n${TURN_STATE_CLOSE}`);

const INPUT_BRIEF_CHARS = 160;

/**
 * The label of a result's images: conversation_read of the stored result returns them, the originals
 * (running the call again, a screenshot, would show new ones). A result not stored yet names only its call.
 */
function imageLabel(images: number, call: ToolUseBlock | undefined, origin: BlockOrigin | undefined): string {
  const what = images === 1 ? "an image" : `${images} images`;
  const them = images === 1 ? "it" : "them";
  if (origin)
    return `[${what} removed from this tool result to save context: ${readCall(origin)} returns ${them} with the result's text]`;
  const input = call ? JSON.stringify(call.input) : "";
  const brief = input.length > INPUT_BRIEF_CHARS ? `${sliceWhole(input, 0, INPUT_BRIEF_CHARS)}…` : input;
  const again = call ? `the same call again (${call.name} ${brief})` : "the same tool call again";
  return `[${what} removed from this tool result to save context: ${again} shows ${them} as the tool sees them now]`;
}

export interface CompactOptions {
  /** Chars of the request outside its messages (system prompt, tool schemas). */
  fixedChars: number;
  budget: CompactionBudget;
  /** Where a block (by identity, as given) is stored. */
  originOf: (block: ContentBlock) => BlockOrigin | undefined;
  /** The index in `messages` of the turn's own task prompt: its words are never cut. */
  taskPrompt?: number;
}

/**
 * One compaction pass over a copy of `messages`, down to the target (in chars, at the budget's
 * chars-per-token). Returns, with the copies, where each copied block is stored (`origins`), so a
 * later pass over the copies still names the call that restores each block.
 */
export function compactMessages(
  messages: readonly WireMessage[],
  { fixedChars, budget: b, originOf, taskPrompt }: CompactOptions,
): { messages: WireMessage[]; report: CompactionReport; origins: Map<ContentBlock, BlockOrigin> } {
  const origins = new Map<ContentBlock, BlockOrigin>();
  const calls = new Map<string, ToolUseBlock>();
  const out: WireMessage[] = messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : m.content.map((x) => {
            if (x.type === "tool_use") calls.set(x.id, x);
            const copy = { ...x } as ContentBlock;
            const origin = originOf(x);
            if (origin) origins.set(copy, origin);
            return copy;
          }),
  }));
  const ref = (i: number, j: number) => origins.get((out[i].content as ContentBlock[])[j]);
  const targets: CompactionTarget[] = [];
  const total = () => fixedChars + out.reduce((n, m) => n + messageChars({ content: m.content as ContentBlock[] }), 0);
  const charsBefore = total();

  // 1. Images in tool results never need to outlive the step that looked at them; the results after
  //    the last assistant message are new to the model, which has not looked at them yet.
  const seen = out.map((m) => m.role).lastIndexOf("assistant");
  out.forEach((m, i) =>
    (m.content as ContentBlock[]).forEach((blk, j) => {
      if (i > seen || blk.type !== "tool_result" || typeof blk.content === "string") return;
      if (!blk.content.some((x) => x.type === "image")) return;
      const images = blk.content.filter((x) => x.type === "image").length;
      blk.content = [
        ...blk.content.filter((x) => x.type === "text"),
        { type: "text", text: imageLabel(images, calls.get(blk.tool_use_id), ref(i, j)) },
      ];
      targets.push({ index: i, block: j, kind: "image", before: images, after: 0 });
    }),
  );

  // 2. Protected: messages[0], the turn's task prompt, the last 3 messages of each role, error
  //    results. Tool results are a role of their own here (one "tool message" per result, as a
  //    provider with a tool role would see them), so ten parallel results in one carrier do not
  //    all count as "the last". A prompt merged into a carrier (the turn before ended on its tool
  //    results) is a prompt: its text blocks are protected as one. A pass's <turn_state> nudge is
  //    no prompt (it would use up the prompts' places) and is never cut.
  const protectedMsg = new Set<number>([0]);
  const protectedBlock = new Set<string>();
  const isCarrier = (m: WireMessage) => (m.content as ContentBlock[]).some((x) => x.type === "tool_result");
  const words = (x: ContentBlock) => (x.type === "text" && !isTurnState(x)) || x.type === "image";
  if (taskPrompt !== undefined && out[taskPrompt]?.role === "user")
    (out[taskPrompt].content as ContentBlock[]).forEach(
      (x, j) => x.type !== "tool_result" && protectedBlock.add(`${taskPrompt}:${j}`),
    );
  let assistants = 0;
  let prompts = 0;
  let results = 0;
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i];
    const blocks = m.content as ContentBlock[];
    if (m.role === "assistant" && assistants < 3) protectedMsg.add(i), assistants++;
    else if (m.role === "user" && !isCarrier(m) && !blocks.every(isTurnState) && prompts < 3)
      protectedMsg.add(i), prompts++;
    if (m.role !== "user" || !isCarrier(m)) continue;
    if (prompts < 3 && blocks.some(words)) {
      blocks.forEach((x, j) => x.type !== "tool_result" && protectedBlock.add(`${i}:${j}`));
      prompts++;
    }
    for (let j = blocks.length - 1; j >= 0; j--)
      if (blocks[j].type === "tool_result" && results < 3) protectedBlock.add(`${i}:${j}`), results++;
  }
  // Error results are protected wherever they are (the model must see why a call failed), and so
  // are cut only as step 4 cuts any protected result too large to fit.
  out.forEach((m, i) =>
    (m.content as ContentBlock[]).forEach((x, j) => {
      if (x.type === "tool_result" && x.is_error) protectedBlock.add(`${i}:${j}`);
    }),
  );
  type Candidate = { index: number; block: number; size: number; tier: number; kind: CompactionTarget["kind"] };
  const candidates: Candidate[] = [];
  out.forEach((m, i) => {
    if (protectedMsg.has(i)) return;
    (m.content as ContentBlock[]).forEach((blk, j) => {
      const size = blockChars(blk);
      if (size <= MIN_KEEP || protectedBlock.has(`${i}:${j}`) || isTurnState(blk)) return;
      // A stub of an oversized text (replay's or an earlier pass's) is as small as it goes.
      if (blk.type === "text" && isOversizedStub(blk.text)) return;
      if (blk.type === "tool_result") candidates.push({ index: i, block: j, size, tier: 0, kind: "tool_result" });
      else if (blk.type === "text")
        candidates.push({
          index: i,
          block: j,
          size,
          tier: m.role === "assistant" ? 1 : 2,
          kind: m.role === "assistant" ? "assistant" : "user",
        });
    });
  });

  const targetChars = Math.floor(budgetTokens(b) * b.compactTargetRatio * b.charsPerToken);
  const label = (c: Candidate, cut: number, kept = "") =>
    `[TRUNCATED — ${cut.toLocaleString("en-US")} of ${c.size.toLocaleString("en-US")} chars cut to save context${kept}; ${readCall(ref(c.index, c.block))} returns the original]`;
  /**
   * Cuts one block down to `keep` chars (head, label naming the restoring call, tail); the chars
   * saved. A result's images left after step 1 are ones the model has not looked at yet: they stay,
   * after the cut text, and the label says so (only their text is cut).
   */
  const shrink = (c: Candidate, keep: number): number => {
    const blk = (out[c.index].content as ContentBlock[])[c.block];
    if (blk.type === "text") blk.text = truncateText(blk.text, keep, label(c, c.size - keep));
    else if (blk.type === "tool_result" && typeof blk.content === "string")
      blk.content = truncateText(blk.content, keep, label(c, c.size - keep));
    else if (blk.type === "tool_result") {
      const parts = blk.content as (TextBlock | ImageBlock)[];
      const images = parts.filter((x) => x.type === "image");
      const text = parts.flatMap((x) => (x.type === "text" ? [x.text] : [])).join("\n");
      if (!images.length) blk.content = truncateText(text, keep, label(c, c.size - keep));
      else {
        // The text keeps what the images' own weight leaves of `keep`.
        const room = Math.max(0, keep - (c.size - text.length));
        const kept = ` (its ${images.length === 1 ? "image is" : `${images.length} images are`} kept)`;
        blk.content = [{ type: "text", text: truncateText(text, room, label(c, c.size - keep, kept)) }, ...images];
      }
    }
    const after = blockChars(blk);
    targets.push({ index: c.index, block: c.block, kind: c.kind, before: c.size, after });
    return c.size - after;
  };
  for (const tier of [0, 1, 2]) {
    let excess = total() - targetChars;
    if (excess <= 0) break;
    const group = candidates.filter((c) => c.tier === tier).sort((x, y) => y.size - x.size || x.index - y.index);
    const reclaimable = group.reduce((n, c) => n + (c.size - MIN_KEEP), 0);
    if (!reclaimable) continue;
    // Proportional: the cut is shared out once, in proportion to what each can give, largest first.
    const cut = Math.min(excess, reclaimable);
    for (const c of group) {
      if (excess <= 0) break;
      const share = Math.min(c.size - MIN_KEEP, Math.ceil(((c.size - MIN_KEEP) / reclaimable) * cut));
      if (share <= 0) continue;
      excess -= shrink(c, c.size - share);
    }
  }
  // 4. A protected result larger than the whole target (a tool's 1 MB answer against a 200k
  //    window, an error result a client posted at that size) can never fit: kept whole, it would only turn the next call into the provider's
  //    overflow error. It keeps its place, head and tail, cut to half the target. So do protected
  //    results that together pass the whole budget (three large parallel reads against a small
  //    window): they are cut to half the target in all, the largest first, to one common size, so
  //    a result under that size stays whole.
  //    An error result is cut like any other when it alone is larger than the target (a client may
  //    post a million chars of it); otherwise it stays whole, and the shared cut is the others'.
  const guarded = (errors: boolean): Candidate[] => {
    const found: Candidate[] = [];
    for (const key of protectedBlock) {
      const [index, block] = key.split(":").map(Number);
      const blk = (out[index].content as ContentBlock[])[block];
      if (blk.type === "tool_result" && (errors || !blk.is_error))
        found.push({ index, block, size: blockChars(blk), tier: 3, kind: "tool_result" });
    }
    return found;
  };
  if (total() > targetChars) {
    for (const c of guarded(true)) if (c.size > targetChars) shrink(c, Math.floor(targetChars / 2));
    const group = guarded(false);
    if (group.reduce((n, c) => n + c.size, 0) > Math.floor(budgetTokens(b) * b.charsPerToken)) {
      const cap = commonCap(
        group.map((c) => c.size),
        Math.floor(targetChars / 2),
      );
      for (const c of group) if (c.size > cap) shrink(c, cap);
    }
  }
  // 5. Still over the whole budget (the overflow 400's forced pass, when the provider counted more
  //    than the estimate): what is left is protected words, earlier prompts and replies in the
  //    tail that no cut above may touch. Those before the turn's own prompt go as stubs of their
  //    head naming the call that reads the rest (core/stubs.ts, as replay stubs an earlier message
  //    too large for the window), largest first, until the request fits. The prompt never does.
  const wholeChars = Math.floor(budgetTokens(b) * b.charsPerToken);
  if (taskPrompt !== undefined && total() > wholeChars) {
    const oversized: { index: number; block: number; size: number }[] = [];
    for (let i = 0; i < taskPrompt; i++)
      (out[i].content as ContentBlock[]).forEach((blk, j) => {
        const guardedWords = protectedMsg.has(i) || protectedBlock.has(`${i}:${j}`);
        if (!guardedWords || blk.type !== "text" || isTurnState(blk) || isOversizedStub(blk.text)) return;
        if (blk.text.length >= OVERSIZED_MIN_CHARS && ref(i, j))
          oversized.push({ index: i, block: j, size: blk.text.length });
      });
    oversized.sort((x, y) => y.size - x.size || x.index - y.index || x.block - y.block);
    for (const c of oversized) {
      if (total() <= wholeChars) break;
      const blk = (out[c.index].content as ContentBlock[])[c.block] as Extract<ContentBlock, { type: "text" }>;
      const origin = ref(c.index, c.block)!;
      const role = out[c.index].role;
      blk.text = oversizedStubText({ ...origin, role, text: blk.text });
      targets.push({ index: c.index, block: c.block, kind: role, before: c.size, after: blk.text.length });
    }
  }
  const charsAfter = total();
  const tok = (c: number) => Math.ceil(c / b.charsPerToken);
  return {
    messages: out,
    origins,
    report: {
      targets,
      charsBefore,
      charsAfter,
      tokensBefore: tok(charsBefore),
      tokensAfter: tok(charsAfter),
      tokensSaved: tok(charsBefore) - tok(charsAfter),
    },
  };
}

/** The size the largest of `sizes` are cut to so that all together come to at most `goal` (never under MIN_KEEP). */
function commonCap(sizes: readonly number[], goal: number): number {
  const sorted = [...sizes].sort((x, y) => x - y);
  let room = goal;
  for (let i = 0; i < sorted.length; i++) {
    const left = sorted.length - i;
    if (sorted[i] * left > room) return Math.max(MIN_KEEP, Math.floor(room / left));
    room -= sorted[i];
  }
  return Math.max(MIN_KEEP, sorted.at(-1) ?? 0);
}

export const COMPACTION_SECTIONS = ["TASK", "PROGRESS", "REMAINING", "DATA", "DECISIONS"] as const;

const SECTION_MEANING: Record<(typeof COMPACTION_SECTIONS)[number], string> = {
  TASK: "what was asked",
  PROGRESS: "what is done",
  REMAINING: "what remains",
  DATA: "the data gathered",
  DECISIONS: "the decisions made",
};

/**
 * The system prompt of the in-turn state call. The headings are spelled out because the turn
 * reads REMAINING back (withRemainingIds); the cap is stated because the state rides every
 * later request of the turn.
 */
export function turnStateSystemPrompt(maxChars: number): string {
  return [
    "Summarize the state of an agent's turn in progress so it can resume after its context was shortened.",
    `Use exactly these sections, in this order: ${COMPACTION_SECTIONS.map((h) => `${h} (${SECTION_MEANING[h]})`).join(", ")}.`,
    'Write each heading alone on its line with a colon (TASK:), then its items as lines starting with "- ". Keep exact ids, names and counts for batch work.',
    `Write at most ${maxChars} characters.`,
  ].join("\n");
}

/** The continuation nudge: without it models treat a shortened context as "done". */
export function continuationNudge(summary: string): string {
  return [
    TURN_STATE_OPEN,
    TURN_STATE_LEAD,
    summary,
    "Resume from REMAINING. Do not redo finished work and do not stop early: finish every remaining item, then answer.",
    TURN_STATE_CLOSE,
  ].join("\n");
}

/** Ids in text: tokens of letters and digits (and _ - .), at least 3 long, with both a letter and a digit. */
export function idTokens(text: string): string[] {
  const out = new Set<string>();
  for (const [t] of text.matchAll(/[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]/g))
    if (t.length >= 3 && /[A-Za-z]/.test(t) && /\d/.test(t)) out.add(t);
  return [...out];
}

/**
 * Batch work's remaining items, deterministically: the ids the task names that no tool call of
 * the turn has touched yet, in the task's order. Carried into REMAINING whatever the summary call
 * wrote, so a compaction can never drop an item of a list the user gave.
 */
export function untouchedIds(task: string, toolCalls: readonly { input: unknown }[]): string[] {
  const touched = new Set(toolCalls.flatMap((c) => idTokens(JSON.stringify(c.input ?? {}))));
  if (!touched.size) return [];
  return idTokens(task).filter((id) => !touched.has(id));
}

const REMAINING_IDS_MAX_CHARS = 4_000;

function remainingLine(ids: readonly string[]): string {
  let line = `- not yet touched by any call (${ids.length} ids the task names): `;
  let shown = 0;
  for (const id of ids) {
    if (line.length + id.length + 2 > REMAINING_IDS_MAX_CHARS) break;
    line += `${shown ? ", " : ""}${id}`;
    shown++;
  }
  return shown < ids.length ? `${line} … and ${ids.length - shown} more` : line;
}

/** The state with every untouched id listed under REMAINING (added there when the summary lacks any). */
export function withRemainingIds(state: string, ids: readonly string[]): string {
  if (!ids.length) return state;
  const heading = /^REMAINING:[^\n]*$/m.exec(state);
  if (!heading) return `${state}\n\nREMAINING:\n${remainingLine(ids)}`;
  const at = heading.index + heading[0].length;
  const next = /^[A-Z][A-Z ]+:/m.exec(state.slice(at));
  const section = state.slice(at, next ? at + next.index : state.length);
  if (ids.every((id) => section.includes(id))) return state;
  return `${state.slice(0, at)}\n${remainingLine(ids)}${state.slice(at)}`;
}

/** When the summary call fails: a deterministic state from what the turn itself shows. */
export function fallbackTurnState(task: string, toolCalls: { name: string; input: unknown }[]): string {
  const calls = toolCalls.map((c) => `${c.name} ${sliceWhole(JSON.stringify(c.input), 0, 120)}`);
  const pending = untouchedIds(task, toolCalls);
  return [
    `TASK:\n- ${sliceWhole(task, 0, 600)}`,
    `PROGRESS:\n${calls.length ? calls.map((c) => `- done: ${c}`).join("\n") : "- (no tool calls yet)"}`,
    `REMAINING:\n${pending.length ? remainingLine(pending) : "- whatever the task asks that the calls above have not covered"}`,
    `DATA:\n- ${calls.length} tool calls so far in this turn`,
    "DECISIONS:\n- (none recorded)",
  ].join("\n\n");
}
