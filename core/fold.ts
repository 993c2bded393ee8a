// The rolling prefix summary, as pure functions: where a fold may cut (the mark), what the one
// summarization call is sent (planFold, run inside the conversation's object), and how its answer
// is held to the size cap.
import type { ModelEntry } from "./models/catalog";
import { SUMMARY_THINKING_ROOM, summarizationParams } from "./model-params";
import { isAttachmentNote, isToolResultCarrier, messageChars, renderMessageText } from "./render";
import type { ModelRequest, StoredMessage } from "./types";
import { sliceWhole, tailWhole } from "./text-cut";

/** Each folded message is excerpted to at most this many chars (head + tail). */
export const FOLD_EXCERPT_CHARS = 2_000;
/** The whole fold prompt's excerpts are capped here, so a fold call can never overflow itself. */
export const FOLD_PROMPT_BUDGET_CHARS = 160_000;

/** A user message with words of its own (not only tool results): the prompts a fallback summary lists. */
const isRealUserMessage = (m: StoredMessage) => m.role === "user" && !isToolResultCarrier(m);

/**
 * Whether a fold may end right before `region[i]`: a user message holding no tool result. One that
 * answers the step before it and asks on in the same message (results, then text: common in an
 * imported Anthropic transcript) continues that step: cut before it, the tail would open on results
 * whose calls were folded away, and the provider refuses every later request. Nor an attachment's
 * note right after another user message: a file uploaded while a turn waits on client tools has
 * its note saved inside that turn, after the step's results (or after another such note). Cut
 * before it, the tail would open on the note with the turn's question and results folded away, and
 * a regenerate would run the note again as if it were the prompt.
 */
const mayCutBefore = (region: readonly StoredMessage[], i: number): boolean => {
  const m = region[i];
  if (m.role !== "user" || m.content.some((b) => b.type === "tool_result")) return false;
  return !(isAttachmentNote(m) && region[i - 1]?.role === "user");
};

/** The tags of the blocks a summary and its sources ride in: the replay's and the fold request's. */
const SUMMARY_BLOCK_TAG = /<(\s*\/?\s*)(conversation_summary|previous_summary|new_messages)/gi;

/**
 * `text` (a message, a summary) made unable to open or close the block it is put in: each of the
 * blocks' own tags in it loses its `<` to `&lt;`, so a message that says `</conversation_summary>`
 * cannot end the summary and speak as the platform after it. Only those tags change (code in a
 * summary keeps its `<` and `&`); the same text always gives the same bytes, and text already
 * neutralised is unchanged.
 */
export const neutralizeSummaryTags = (text: string): string => text.replace(SUMMARY_BLOCK_TAG, "&lt;$1$2");

/**
 * The fold mark over the unsummarized region (oldest first): the index of the first message the
 * fold keeps, or null when nothing can be folded. It keeps the last `tailMessages` verbatim, then
 * walks back to the nearest user message that holds no tool result and is no note saved inside a
 * turn (mayCutBefore: a provider replay must start on a user turn, and one that answers tool calls
 * continues the step before it). Cutting right before such a message can never separate a tool_use
 * from its tool_result: results always sit in the user message right after their call.
 */
export function chooseFoldMark(region: readonly StoredMessage[], tailMessages: number): number | null {
  let mark = region.length - tailMessages;
  if (mark <= 0) return null;
  while (mark > 0 && !mayCutBefore(region, mark)) mark--;
  return mark > 0 ? mark : null;
}

/**
 * How much of the unsummarized region one fold takes, as if the conversation had grown turn by
 * turn. Growing a turn at a time, a conversation dispatches a fold right after the turn that first
 * puts its foldable part (everything before the mark) over the threshold, so each fold absorbs
 * about one threshold of conversation and the summary covers what the threshold says. A region
 * that arrived at once (an import) or piled up behind a fold in flight is cut the same way: the
 * shortest prefix ending where a turn ends (where mayCutBefore allows a cut, or at the region's
 * end) whose foldable chars exceed the threshold; the whole region when none does.
 */
export function turnByTurnFoldLength(
  region: readonly StoredMessage[],
  tailMessages: number,
  thresholdChars: number,
): number {
  const before: number[] = [0];
  for (const m of region) before.push(before[before.length - 1] + messageChars(m));
  for (let end = 1; end < region.length; end++) {
    if (!mayCutBefore(region, end)) continue;
    let mark = end - tailMessages;
    if (mark <= 0) continue;
    while (mark > 0 && !mayCutBefore(region, mark)) mark--;
    if (mark > 0 && before[mark] > thresholdChars) return end;
  }
  return region.length;
}

/** Head and tail of `text` within `max` chars, with a note of what was cut. */
export function excerpt(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = max - 60;
  const head = Math.ceil(keep * 0.7);
  const tail = keep - head;
  return `${sliceWhole(text, 0, head)}\n[… ${text.length - head - tail} chars omitted …]\n${tailWhole(text, tail)}`;
}

export function foldSystemPrompt(maxChars: number): string {
  return [
    "You maintain the rolling summary of a long conversation between a user and an assistant.",
    "You are given the previous summary (if any) and excerpts of the messages that follow it, oldest first.",
    "Write ONE new summary that folds the previous summary in together with the new messages: it replaces the previous summary entirely, so keep everything from it that still matters.",
    "Keep: the user's goals and requests, decisions and their reasons, facts, names, numbers, ids, file names and anything the user asked to remember, and what is still open. Drop pleasantries and repetition.",
    "Refer to messages by their seq numbers where it helps a later reader find the original.",
    `Write plain text, at most ${maxChars} characters.`,
  ].join("\n");
}

/**
 * The folded messages' excerpts within `budget` chars, oldest first, and how many of them fit: a
 * message past the budget is not shown, and a note says so (foldCut then keeps it out of the fold).
 */
export function foldExcerpts(folded: readonly StoredMessage[], budget: number): { lines: string[]; included: number } {
  const perMessage = Math.max(200, Math.min(FOLD_EXCERPT_CHARS, Math.floor(budget / Math.max(1, folded.length))));
  const lines: string[] = [];
  let used = 0;
  for (const m of folded) {
    const kind = isToolResultCarrier(m) ? "tool results" : m.role;
    const entry = `[seq ${m.seq} ${kind}]\n${excerpt(neutralizeSummaryTags(renderMessageText(m)), perMessage)}`;
    if (used + entry.length > budget) {
      const included = lines.length;
      lines.push(`[… ${folded.length - included} later messages omitted to keep this request bounded …]`);
      return { lines, included };
    }
    lines.push(entry);
    used += entry.length;
  }
  return { lines, included: folded.length };
}

/**
 * Where a fold cuts when its request showed only the first `included` of the `mark` messages it was
 * to fold: the last place mayCutBefore allows at or before `included`, so the summary
 * covers nothing its writer did not see (the rest stays in the tail for the next fold). `mark`
 * itself when all were shown, or when no such message exists (a run of tool calls longer than the
 * budget: folding them unseen beats never folding again).
 */
export function foldCut(region: readonly StoredMessage[], mark: number, included: number): number {
  if (included >= mark) return mark;
  for (let i = included; i > 0; i--) if (mayCutBefore(region, i)) return i;
  return mark;
}

/**
 * The excerpts' budget for a model's window as the settings state it, never above
 * FOLD_PROMPT_BUDGET_CHARS; a provider overflow shrinks it further (shrinkFoldBudget). The rest of
 * the window holds what else the call is sent and may answer: the reply's max_tokens at its most
 * (the cap at 1 char per token, plus the thinking room a model that always thinks needs), the
 * previous summary (up to the cap) and the prompt around them. A model that answers past its window
 * stops at `model_context_window_exceeded` with a cut summary, which is not taken.
 */
export function foldBudgetChars(settings: {
  contextWindowTokens: number;
  summaryMaxChars: number;
  charsPerToken: number;
}): number {
  const { contextWindowTokens, summaryMaxChars, charsPerToken } = settings;
  const replyTokens = Math.max(256, summaryMaxChars) + SUMMARY_THINKING_ROOM;
  const promptChars = summaryMaxChars + foldSystemPrompt(summaryMaxChars).length + FOLD_FRAME_CHARS;
  const inputTokens = contextWindowTokens - replyTokens - Math.ceil(promptChars / charsPerToken);
  const windowChars = Math.floor(inputTokens * charsPerToken * 0.8);
  return Math.max(FOLD_MIN_BUDGET_CHARS, Math.min(FOLD_PROMPT_BUDGET_CHARS, windowChars));
}

/** The fold request's tags and instructions around the summary and the excerpts (buildFoldRequest). */
const FOLD_FRAME_CHARS = 200;

/** One fold worked out over its region: where it ends and what its request shows. */
export interface FoldPlan {
  /** The fold mark (chooseFoldMark): where a fold that showed everything would end. */
  mark: number;
  /** Where this fold ends (foldCut): the excerpts show the messages before it and no later one. */
  cut: number;
  /** The excerpts of the messages before `cut` within the budget, with a note when later ones are left out. */
  excerpts: string[];
}

/**
 * The fold of `region` at `budgetChars`, or null when nothing can be folded. The cut is chosen
 * from the excerpts first and the request then shows only the messages before it, so no message
 * is both summarized and kept verbatim in the tail.
 */
export function planFold(region: readonly StoredMessage[], tailMessages: number, budgetChars: number): FoldPlan | null {
  const mark = chooseFoldMark(region, tailMessages);
  if (mark === null) return null;
  const { lines, included } = foldExcerpts(region.slice(0, mark), budgetChars);
  const cut = foldCut(region, mark, included);
  // Every message shown, or none to end on (the fold then takes unseen messages: see foldCut).
  if (cut >= included) return { mark, cut, excerpts: lines };
  const note = `[… ${mark - cut} later messages omitted to keep this request bounded …]`;
  return { mark, cut, excerpts: [...lines.slice(0, cut), note] };
}

/** The one model call of a fold: previous summary + capped excerpts of the folded messages. */
export function buildFoldRequest(opts: {
  /** The model's catalog entry: the call takes the least thinking it allows, with room for it. */
  model: ModelEntry;
  previousSummary: string | null;
  /** The folded messages, excerpted here; or `excerpts` already made (planFold, in the object). */
  folded?: readonly StoredMessage[];
  excerpts?: readonly string[];
  maxChars: number;
  /** The excerpts' total, FOLD_PROMPT_BUDGET_CHARS unless the model's window needs less. */
  budgetChars?: number;
}): ModelRequest {
  // Neither block can be closed from inside: the excerpts are neutralised when made (foldExcerpts),
  // and again here for excerpts made elsewhere (a no-op on neutralised text).
  const lines = (
    opts.excerpts ?? foldExcerpts(opts.folded ?? [], opts.budgetChars ?? FOLD_PROMPT_BUDGET_CHARS).lines
  ).map(neutralizeSummaryTags);
  const previous = opts.previousSummary
    ? `<previous_summary>\n${neutralizeSummaryTags(opts.previousSummary)}\n</previous_summary>`
    : "<previous_summary>(none: this is the first fold)</previous_summary>";
  return {
    model: opts.model.id,
    // Room for the cap at 1 char per token (never below 256): CJK text runs near that, and a
    // reply cut short of the cap is not taken. Plus the thinking the model will not let the call go
    // without (it counts against max_tokens). Only what is written is billed.
    ...summarizationParams(opts.model, Math.max(256, opts.maxChars)),
    system: [{ type: "text", text: foldSystemPrompt(opts.maxChars) }],
    tools: [],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: previous },
          {
            type: "text",
            text: `<new_messages>\n${lines.join("\n\n")}\n</new_messages>\n\nWrite the new summary now.`,
          },
        ],
      },
    ],
  };
}

/** The smallest cap a fold's summary is held to, however little it replaces: the least summaryMaxChars allows. */
export const FOLD_MIN_SUMMARY_CHARS = 200;

/**
 * The most a fold's summary may hold: `summaryMaxChars`, and never more than what it replaces on
 * replay, so a fold never makes the replay larger. It replaces the previous summary and the folded
 * messages (weighed by messageChars, as the fold threshold weighs them); `addedChars` is what the
 * summary's preamble adds around it (all of it on a first fold). Never below FOLD_MIN_SUMMARY_CHARS.
 */
export function foldSummaryCap(o: {
  summaryMaxChars: number;
  previousSummaryChars: number;
  foldedChars: number;
  addedChars: number;
}): number {
  const replaced = o.previousSummaryChars + o.foldedChars - o.addedChars;
  return Math.min(o.summaryMaxChars, Math.max(FOLD_MIN_SUMMARY_CHARS, replaced));
}

/** Holds a summary to `max` chars even when the model overran: cut at the last line or sentence end. */
export function capSummary(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const cut = sliceWhole(trimmed, 0, max);
  const lastBreak = Math.max(cut.lastIndexOf("\n"), cut.lastIndexOf(". "));
  return (lastBreak > max * 0.6 ? cut.slice(0, lastBreak + 1) : cut).trim();
}

/**
 * The excerpt budget after the provider said "prompt is too long: N tokens > M maximum": scaled
 * by M/N with a margin (halved when the numbers are missing), never below a floor.
 */
export function shrinkFoldBudget(budgetChars: number, overflowMessage: string): number {
  const m = /(\d+) tokens > (\d+) maximum/.exec(overflowMessage);
  const ratio = m ? Number(m[2]) / Number(m[1]) : 0.5;
  return Math.max(FOLD_MIN_BUDGET_CHARS, Math.floor(budgetChars * Math.min(0.5, ratio * 0.8)));
}

export const FOLD_MIN_BUDGET_CHARS = 2_000;

/**
 * A fold summary written without the model, for a region whose fold call keeps failing: the
 * previous summary, then the folded range with each user prompt's first line. Deterministic and
 * within the cap, so folding moves on; every original stays readable through conversation_read.
 */
export function fallbackFoldSummary(
  previousSummary: string | null,
  folded: readonly StoredMessage[],
  maxChars: number,
): string {
  const from = folded[0]?.seq ?? 0;
  const to = folded[folded.length - 1]?.seq ?? 0;
  const prompts = folded.filter(isRealUserMessage).map((m) => {
    const first = renderMessageText(m)
      .split("\n")
      .find((l) => l.trim())
      ?.trim();
    // Replayed inside <conversation_summary> and folded again inside <previous_summary>.
    return `- seq ${m.seq}: ${first === undefined ? "(no text)" : neutralizeSummaryTags(sliceWhole(first, 0, 160))}`;
  });
  const head = `[Written without the summarizer model, which failed repeatedly. Messages ${from}-${to} are intact: read them with conversation_read.]`;
  // The previous summary is folded in whole, as a model-written fold folds it: the cap trims the
  // prompt list first (the originals stay readable), then the summary, only as far as it must.
  const previous = previousSummary?.trim() ?? "";
  const kept = [head, previous].filter(Boolean).join("\n");
  const listHead = `User prompts of messages ${from}-${to}:`;
  const listed = promptsWithin(prompts, maxChars - kept.length - 1 - listHead.length);
  if (listed.length) return [kept, listHead, ...listed].join("\n");
  // Not even a line of the list fits: the previous summary has all the head leaves.
  return capSummary([head, capSummary(previous, maxChars - head.length - 1)].filter(Boolean).join("\n"), maxChars);
}

/** The prompt lines that fit in `room` chars (each with its newline), then a note on those left out. */
function promptsWithin(lines: readonly string[], room: number): string[] {
  const noteChars = (left: number) => (left ? omittedNote(left).length + 1 : 0);
  const listed: string[] = [];
  let free = room;
  for (const line of lines) {
    // A line stays only with room for the note on the lines after it.
    if (line.length + 1 + noteChars(lines.length - listed.length - 1) > free) break;
    listed.push(line);
    free -= line.length + 1;
  }
  const left = lines.length - listed.length;
  if (!left) return listed;
  return noteChars(left) <= free ? [...listed, omittedNote(left)] : listed;
}

const omittedNote = (n: number) => `- … ${n} later prompts left out to keep this summary within its cap`;
