// Stale tool-result stubs: at replay time, a large tool result older than the last few user
// exchanges is replaced by a deterministic, self-describing stub that names the exact call
// returning the original bytes. Nothing stored changes; no model call is made. An error result
// (is_error) is stubbed like any other, its stub still flagged is_error: a client may post one of
// a million chars, and it would otherwise ride, and overflow, every request after it.
//
// Prompt caching: every newly stubbed result changes the replay from its position on, so
// transitions are batched. The stub watermark advances only once the chars that stubbing would
// reclaim pass `stubBatchChars`; between jumps the replayed prefix stays byte-identical. The
// watermark is derived from the history alone (replaying the exchange sequence), so it is the
// same on every call and in both rebuild paths (the /replay view counts the prompt the next
// request will add: applyStubsBeforePrompt). The one stored input is a fold's: the seq through
// which results were stubbed when it committed (StubInput), since the tail it leaves no longer
// holds the exchanges that put the watermark there. A refused turn, which no request carries
// (core/replay-rules.ts), is no exchange and has no stale results.
//
// A result is stubbed wherever its user message puts it: beside the next question too (an imported
// transcript's, a client's that answers its calls and asks on in one message). Only its tool_result
// blocks are weighed and stubbed, the text beside them never; the message still starts an exchange,
// and its results age with that exchange (stale once it is older than the last few).
import { isAttachmentNote, isToolResultCarrier, messageChars } from "./render";
import { isPrompt, refusedTurns } from "./replay-rules";
import type { ContentBlock, StoredMessage, ToolResultBlock, ToolUseBlock } from "./types";
import { sliceWhole } from "./text-cut";

export interface StubSettings {
  stubMinChars: number;
  stubAfterExchanges: number;
  stubBatchChars: number;
}

/**
 * The settings and, after a fold, the seq through which results were stubbed when it committed
 * (ConversationHead.stubbedThroughMessage). The replay source is then only the tail after the
 * boundary, whose own exchanges would put the watermark back to its start: a result stubbed because
 * its batch was filled by results now folded would come back whole and be stubbed again a few turns
 * on, moving the prefix twice. Results at or below that seq stay stubbed, and they fill no new batch.
 */
export interface StubInput extends StubSettings {
  stubbedThrough?: number;
}

export interface StubOutcome {
  messages: StoredMessage[];
  stubbed: number;
  /** Chars of the originals that the stubs replaced, minus the stubs' own chars. */
  savedChars: number;
  /** Stale results not stubbed yet because their batch has not filled. */
  pendingChars: number;
}

const INPUT_BRIEF_CHARS = 160;
/** Exchanges a stale result waits for its batch to fill before it is stubbed anyway. */
export const STUB_BATCH_MAX_WAIT = 4;

/** An exchange starts here: a prompt, not a carrier of tool results nor an attachment's note. */
const isRealUserPrompt = (m: StoredMessage) => m.role === "user" && !isToolResultCarrier(m) && !isAttachmentNote(m);

/** Index in `messages` before which stale results are stubbed (0: none), replaying the batching. */
export function stubWatermark(messages: readonly StoredMessage[], s: StubInput): number {
  const refused = refusedTurns(messages);
  const prompts: number[] = [];
  messages.forEach((m, i) => isRealUserPrompt(m) && !refused.has(i) && prompts.push(i));
  // Messages at or below the fold's stub seq are stubbed already: the watermark starts past them.
  const floor = s.stubbedThrough ? messages.findIndex((m) => m.seq > (s.stubbedThrough ?? 0)) : 0;
  let watermark = floor < 0 ? messages.length : floor;
  let cutoff = watermark;
  let pending = 0;
  let pendingSince = 0;
  for (let j = 0; j < prompts.length; j++) {
    // With prompt j the newest, the last `stubAfterExchanges` exchanges start at this index.
    const k = j - s.stubAfterExchanges + 1;
    if (k < 1) continue;
    const nextCutoff = prompts[k];
    if (nextCutoff <= cutoff) continue;
    if (pending === 0) pendingSince = j;
    for (let i = cutoff; i < nextCutoff; i++) if (!refused.has(i)) pending += staleChars(messages[i], s.stubMinChars);
    cutoff = nextCutoff;
    // A batch that never fills (one stale result under it) is stubbed all the same, a few exchanges on.
    if (pending > 0 && (pending >= s.stubBatchChars || j - pendingSince >= STUB_BATCH_MAX_WAIT)) {
      watermark = cutoff;
      pending = 0;
    }
  }
  return watermark;
}

/**
 * The seq through which stale results are stubbed in `thread` (the master's replay source, as the
 * last request built it): what a fold's commit records in the head, so that no later request
 * carries one of them whole again (StubInput). Never below the floor already recorded; 0 for none.
 */
export function stubbedThroughSeq(thread: readonly StoredMessage[], s: StubInput): number {
  const watermark = stubWatermark(thread, s);
  return Math.max(s.stubbedThrough ?? 0, watermark > 0 ? thread[watermark - 1].seq : 0);
}

/** The stale weight of a user message's results, whatever else it holds (a question beside them). */
function staleChars(m: StoredMessage, min: number): number {
  if (m.role !== "user") return 0;
  let n = 0;
  for (const b of m.content) if (b.type === "tool_result") n += eligible(b, min);
  return n;
}

function eligible(b: ToolResultBlock, min: number): number {
  const chars = resultWeight(b);
  return chars >= min ? chars : 0;
}

/** What a result weighs in a request: its text, and an image at its base64 length (not its short label). */
function resultWeight(b: ToolResultBlock): number {
  if (typeof b.content === "string") return b.content.length;
  return b.content.reduce(
    (n, c) => n + (c.type === "text" ? c.text.length : c.type === "image" ? imageChars(c) : 0),
    Math.max(0, b.content.length - 1),
  );
}

const imageChars = (c: ContentBlock) =>
  c.type === "image" ? (c.source.type === "base64" ? c.source.data.length : c.source.url.length) : 0;
const imagesIn = (b: ToolResultBlock) =>
  typeof b.content === "string" ? 0 : b.content.filter((c) => c.type === "image").length;

/**
 * The prompt the next turn adds, as stubbing counts it (a real prompt; its words never matter): the
 * /replay view, taken between turns, ages results as the next request will, with that prompt in it.
 */
const NEXT_PROMPT: StoredMessage = {
  id: "",
  seq: Number.MAX_SAFE_INTEGER,
  role: "user",
  content: [{ type: "text", text: "the next prompt" }],
  createdAt: "",
};

/** applyStubs as the next request will apply them, once its new prompt follows `messages`. */
export function applyStubsBeforePrompt(
  messages: readonly StoredMessage[],
  s: StubInput,
  conversationId: string,
): StubOutcome {
  const out = applyStubs([...messages, NEXT_PROMPT], s, conversationId);
  return { ...out, messages: out.messages.slice(0, -1) };
}

/** The history with every stale result before the watermark stubbed. Returns new objects only where changed. */
export function applyStubs(messages: readonly StoredMessage[], s: StubInput, conversationId: string): StubOutcome {
  const watermark = stubWatermark(messages, s);
  const refused = refusedTurns(messages);
  const cutoff = staleCutoff(messages, s, refused);
  const calls = new Map<string, ToolUseBlock>();
  let stubbed = 0;
  let savedChars = 0;
  let pendingChars = 0;
  const out = messages.map((m, i) => {
    if (m.role === "assistant") for (const b of m.content) if (b.type === "tool_use") calls.set(b.id, b);
    if (m.role !== "user" || refused.has(i) || !m.content.some((b) => b.type === "tool_result")) return m;
    if (i >= watermark) {
      if (i < cutoff) pendingChars += staleChars(m, s.stubMinChars);
      return m;
    }
    let changed = false;
    const content = m.content.map((b, blockIndex): ContentBlock => {
      if (b.type !== "tool_result" || !eligible(b, s.stubMinChars)) return b;
      const chars = resultWeight(b);
      const stub = stubText({
        conversationId,
        message: m,
        blockIndex,
        chars,
        call: calls.get(b.tool_use_id),
        images: imagesIn(b),
        error: b.is_error === true,
      });
      changed = true;
      stubbed++;
      savedChars += chars - stub.length;
      // An error's stub is still the error's answer: the model reads the call as failed, as it did.
      return b.is_error
        ? { type: "tool_result", tool_use_id: b.tool_use_id, content: stub, is_error: true }
        : { type: "tool_result", tool_use_id: b.tool_use_id, content: stub };
    });
    return changed ? { ...m, content } : m;
  });
  return { messages: out, stubbed, savedChars, pendingChars };
}

/** The index where the last `stubAfterExchanges` exchanges start (results before it are stale). */
function staleCutoff(messages: readonly StoredMessage[], s: StubSettings, refused: ReadonlySet<number>): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!isRealUserPrompt(messages[i]) || refused.has(i)) continue;
    if (++seen === s.stubAfterExchanges) return i;
  }
  return 0;
}

/** The stub: what ran, how big its answer was, where it lives, and the call that returns it. */
export function stubText(opts: {
  conversationId: string;
  message: StoredMessage;
  blockIndex: number;
  chars: number;
  call?: ToolUseBlock;
  /** Images the result held: the conversation_read call the stub names returns them with the text. */
  images?: number;
  /** The result was the call's error (is_error): the stub says so, and keeps the flag on its block. */
  error?: boolean;
}): string {
  const { conversationId, message, blockIndex, chars, call, images = 0, error = false } = opts;
  const input = call ? JSON.stringify(call.input) : "";
  const brief = input.length > INPUT_BRIEF_CHARS ? `${sliceWhole(input, 0, INPUT_BRIEF_CHARS)}…` : input;
  const what = call ? `${call.name} ${brief}` : "a tool call";
  const read = JSON.stringify({ conversation_id: conversationId, message_id: message.id, block: blockIndex });
  const where = `(message ${message.id}, seq ${message.seq})`;
  if (images > 0)
    return `[stale tool result replaced by this stub: ${what} returned ${images === 1 ? "an image" : `${images} images`}, ${chars.toLocaleString("en-US")} chars in all ${where}. The original is stored unchanged; conversation_read ${read} returns its text and ${images === 1 ? "the image" : "the images"}.]`;
  const answer = error ? "an error of " : "";
  return `[stale tool result replaced by this stub: ${what} returned ${answer}${chars.toLocaleString("en-US")} chars ${where}. The original is stored unchanged and searchable; conversation_read ${read} returns it byte for byte.]`;
}

// Oversized earlier messages: the never-folding tail (the last `tailMessages` messages) can hold
// more text than the model's window (an imported 4 MB message, two prompts near the turn limit).
// A request whose history up to the turn's own prompt would not fit then carries the largest
// earlier user and assistant texts as stubs, largest first, until it fits: each keeps its head and
// names the conversation_read call that reads the rest. The turn's own prompt is never stubbed, nor
// anything after it (the turn's steps are the in-turn compactor's). A stub is a function of its
// block alone and the choice of the history and settings alone, so the same request is built each
// time and the prompt cache holds; nothing stored changes. The choice keeps every stub an earlier
// turn's request carried (it replays them), so a growing history only ever adds stubs. Thinking
// weighs as the request's guard (core/thinking-guard.ts) will send it: an unknown block not at all,
// and an earlier reply's not once a stub or the pointer put in place at a later turn moved its prefix.

/** Text under this many chars is never stubbed to fit the window: its stub would save too little. */
export const OVERSIZED_MIN_CHARS = 2_000;
/** The head of an oversized text its stub keeps. */
export const OVERSIZED_HEAD_CHARS = 500;
const OVERSIZED_MARK = " replaced by this stub to fit the context window ";

/** Where an oversized text is stored: the call its stub names reads the rest from there. */
export interface OversizedText {
  conversationId: string;
  messageId: string;
  /** Unknown to the in-turn compactor (it knows blocks by message id): then left unsaid. */
  seq?: number;
  role: "user" | "assistant";
  block: number;
  text: string;
}

/** The stub of an oversized earlier text: its size, where it lives, the call that reads the rest, then its head. */
export function oversizedStubText(o: OversizedText): string {
  const head = sliceWhole(o.text, 0, OVERSIZED_HEAD_CHARS);
  const read = JSON.stringify({
    conversation_id: o.conversationId,
    message_id: o.messageId,
    block: o.block,
    offset: head.length,
  });
  const what = o.role === "user" ? "earlier user message" : "earlier assistant reply";
  const where = `(message ${o.messageId}${o.seq === undefined ? "" : `, seq ${o.seq}`}, block ${o.block})`;
  return `[${what} of ${o.text.length.toLocaleString("en-US")} chars${OVERSIZED_MARK}${where}: its first ${head.length.toLocaleString("en-US")} chars follow. The original is stored unchanged and searchable; conversation_read ${read} reads the rest, page by page.]\n${head}…`;
}

/** A text oversizedStubText wrote (it is never stubbed again, nor cut by the compactor). */
export const isOversizedStub = (text: string): boolean =>
  text.startsWith("[earlier ") && text.includes(OVERSIZED_MARK) && text.endsWith("…");

export interface WindowFit {
  conversationId: string;
  /** Chars of the request outside these messages: system prompt, tool schemas, summary preamble. */
  fixedChars: number;
  /** What the request may hold, in chars: the window less the output reserve, at the settings' chars per token. */
  budgetChars: number;
  /** A new prompt follows `messages` (the /replay view): every message is earlier than the turn's prompt. */
  promptNext: boolean;
  /**
   * Whether a thinking block can go back at all: known to the platform, with the prefix it was
   * produced after (core/thinking-guard.ts knownThinking). One that cannot (an imported reply's, a
   * foreign signature) is never sent, so it weighs nothing. Absent: every thinking block counts.
   */
  knownThinking?: (block: ContentBlock) => boolean;
}

export interface WindowFitOutcome {
  messages: StoredMessage[];
  stubbed: number;
  savedChars: number;
  /** The oldest messages left out for the pointer that stands in for them (0: none). */
  omitted?: number;
}

// A history whose earlier texts, every one stubbed, still overflow the window (an import far longer
// than the window, before its folds land: they take one threshold at a time, in the background):
// the oldest run of messages goes as one pointer message naming the conversation_read call that
// reads them, with a synthetic acknowledgement after it, and the kept part starts on a real user
// prompt (no tool result in it, so every tool call stays with its result). The run is chosen as the
// stubs are, replaying each prompt's request, and cut to half the window when it moves, so the next
// turns add to the kept part without moving the pointer; a fold, once it lands, replaces the run
// with its summary. Nothing stored changes.

/** When a run is left out, the kept part is cut to this share of the window, so it moves seldom. */
export const OMITTED_KEEP_RATIO = 0.5;
/** The most chars the pointer and its acknowledgement take: the list of prompts stops within it. */
export const OMITTED_POINTER_CHARS = 3_000;
const OMITTED_PROMPT_LINE_CHARS = 120;

/**
 * The pointer that stands in for messages `from`-`to` (seqs), with the first line of each user
 * prompt in them but those of `refused` turns (seqs), which no later request may bring back.
 */
export function omittedRunText(o: {
  conversationId: string;
  run: readonly StoredMessage[];
  refused?: ReadonlySet<number>;
}): string {
  const from = o.run[0]?.seq ?? 0;
  const to = o.run[o.run.length - 1]?.seq ?? 0;
  const range = JSON.stringify({ conversation_id: o.conversationId, from_seq: from, to_seq: to });
  const head = [
    `[Messages ${from}-${to} of this conversation (${o.conversationId}) are not shown here: the request would not fit the context window with them, and their summary is not written yet. Their originals are stored unchanged and can be recalled exactly:`,
    `- conversation_read ${range} reads them (50 at a time; or one message by message_id, byte for byte);`,
    `- memory_search {"query":"..."} finds them by words.`,
    "When the user refers to something from before that is not in view, recall it with those calls before answering.",
  ];
  const lines = o.run
    .filter((m) => isRealUserPrompt(m) && !o.refused?.has(m.seq))
    .map((m) => {
      // The person's words: its text blocks, not the headers a rendering gives images and results.
      const first = m.content
        .flatMap((b) => (b.type === "text" ? [b.text] : []))
        .join("\n")
        .split("\n")
        .find((l) => l.trim())
        ?.trim();
      const cut = first === undefined ? "(no text)" : sliceWhole(first, 0, OMITTED_PROMPT_LINE_CHARS);
      return `- seq ${m.seq}: ${cut}${first !== undefined && cut.length < first.length ? "…" : ""}`;
    });
  const room = OMITTED_POINTER_CHARS - OMITTED_ACK.length - head.join("\n").length - 200;
  const listed: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + line.length + 1 > room) break;
    listed.push(line);
    used += line.length + 1;
  }
  const left = lines.length - listed.length;
  const list = lines.length ? [`User prompts of messages ${from}-${to}:`, ...listed] : [];
  if (left) list.push(`- … ${left} later prompts not listed`);
  return `${[...head, ...list].join("\n")}]`;
}

const OMITTED_ACK =
  "Understood. I will recall those messages with conversation_read or memory_search when they matter.";

/** The pointer and its acknowledgement, standing in for `run` (the oldest messages of the replay source). */
function omittedRun(o: {
  conversationId: string;
  run: readonly StoredMessage[];
  refused: ReadonlySet<number>;
}): StoredMessage[] {
  const { run } = o;
  const last = run[run.length - 1];
  return [
    {
      id: "",
      seq: run[0].seq,
      role: "user",
      content: [{ type: "text", text: omittedRunText(o) }],
      createdAt: last.createdAt,
    },
    {
      id: "",
      seq: last.seq,
      role: "assistant",
      content: [{ type: "text", text: OMITTED_ACK }],
      createdAt: last.createdAt,
    },
  ];
}

/**
 * Where the kept part starts once stubs are not enough at the prompt at `step`: the first prompt
 * after `from` (no tool result in it) from which the request fits OMITTED_KEEP_RATIO of the window,
 * or the last one up to `step` when none does. `from` when no prompt qualifies, or when the turn at
 * `step` overflows on its own (its prompt is too large: that is the in-turn compactor's).
 */
function omittedCut(o: {
  from: number;
  step: number;
  chars: number;
  sizes: readonly number[];
  /** The thinking each message still sends: a moved pointer moves the prefix of every message it keeps. */
  thinking: (i: number) => number;
  cutAt: (i: number) => boolean;
  targetChars: number;
  budgetChars: number;
}): number {
  let chars = o.chars + (o.from === 0 ? OMITTED_POINTER_CHARS : 0);
  let thinking = 0;
  for (let i = o.from; i < o.step; i++) thinking += o.thinking(i);
  let last = o.from;
  for (let i = o.from; i <= o.step; i++) {
    if (i > o.from && o.cutAt(i)) {
      last = i;
      if (chars - thinking <= o.targetChars) return i;
    }
    if (i === o.step && chars > o.budgetChars) return o.from;
    chars -= o.sizes[i] ?? 0;
    if (i < o.step) thinking -= o.thinking(i);
  }
  return last;
}

/** A reply's thinking blocks the fit still counts: each block's index and weight. */
type LiveThinking = Map<number, { block: number; chars: number }[]>;

/**
 * The thinking blocks of `messages` that go back (`known`; a refused turn's never), by message index.
 * Each weighs as messageChars weighs it.
 */
function liveThinking(
  messages: readonly StoredMessage[],
  refused: ReadonlySet<number>,
  known: (block: ContentBlock) => boolean,
): LiveThinking {
  const live: LiveThinking = new Map();
  messages.forEach((m, i) => {
    if (refused.has(i) || m.role !== "assistant") return;
    const blocks: { block: number; chars: number }[] = [];
    m.content.forEach((b, block) => {
      if ((b.type === "thinking" || b.type === "redacted_thinking") && known(b))
        blocks.push({ block, chars: messageChars({ content: [b] }) });
    });
    if (blocks.length) live.set(i, blocks);
  });
  return live;
}

/** What a message weighs in the request, its thinking only where it goes back. */
function sentChars(m: StoredMessage, live: readonly { block: number; chars: number }[] | undefined): number {
  let n = 0;
  m.content.forEach((b, block) => {
    if (b.type === "thinking" || b.type === "redacted_thinking") n += live?.find((t) => t.block === block)?.chars ?? 0;
    else n += messageChars({ content: [b] });
  });
  return n;
}

/**
 * The history with its largest earlier texts stubbed until the request up to the turn's prompt fits,
 * chosen so that a later request stubs a superset: the choice is replayed prompt by prompt, each
 * earlier turn's request as it was built, adding the largest texts before that prompt only when it
 * overflows with the stubs it inherits. Choosing afresh on each build would let the last turn's
 * prompt, once earlier, take the place of a smaller text stubbed before: that text would come back
 * whole and the request's prefix move from it.
 */
export function fitToWindow(messages: StoredMessage[], o: WindowFit): WindowFitOutcome {
  const unchanged = { messages, stubbed: 0, savedChars: 0 };
  const refused = refusedTurns(messages, o.promptNext);
  const prompts: number[] = [];
  messages.forEach((m, i) => isRealUserPrompt(m) && !refused.has(i) && prompts.push(i));
  if (o.promptNext) prompts.push(messages.length);
  const prompt = prompts.at(-1) ?? -1;
  if (prompt <= 0) return unchanged;
  // Thinking the request's guard never sends (unknown to the platform) weighs nothing from the start.
  const thinking = liveThinking(messages, refused, o.knownThinking ?? (() => true));
  const weigh = (i: number) => (refused.has(i) ? 0 : sentChars(messages[i], thinking.get(i)));
  // Each message's weight as sent, weighed once: the fit's own stubs and drops adjust `sizes` below.
  const weights: number[] = [];
  let chars = o.fixedChars;
  for (let i = 0; i <= prompt && i < messages.length; i++) {
    weights[i] = weigh(i);
    chars += weights[i];
  }
  // Stubs only shrink a request, and an earlier turn's held less: none of them overflowed either.
  if (chars <= o.budgetChars) return unchanged;
  const candidates: { index: number; block: number; size: number }[] = [];
  for (let i = 0; i < prompt; i++) {
    const m = messages[i];
    if (refused.has(i) || isToolResultCarrier(m)) continue;
    m.content.forEach((b, block) => {
      if (b.type === "text" && b.text.length >= OVERSIZED_MIN_CHARS && !isOversizedStub(b.text))
        candidates.push({ index: i, block, size: b.text.length });
    });
  }
  candidates.sort((x, y) => y.size - x.size || x.index - y.index || x.block - y.block);
  const stubs = new Map<number, Map<number, string>>();
  let savedChars = 0;
  let stubbed = 0;
  chars = o.fixedChars;
  let counted = 0;
  // What each message weighs in the request as the fit goes (stubs applied; a refused turn's nothing).
  const sizes: number[] = [];
  // The first message kept after the pointer standing in for the ones before it (0: no pointer).
  let cut = 0;
  const cutAt = (i: number) => i === messages.length || (!refused.has(i) && isPrompt(messages[i]));
  /**
   * A stub (block `block` of message `from`) or a moved pointer put in place at the prompt at `step`
   * moves the prefix of every earlier reply after it: their thinking, produced before, is dropped by
   * the request's guard, so it stops counting (once). Replies of later turns, produced with it in
   * place, keep theirs.
   */
  const dropThinking = (from: number, block: number, step: number) => {
    for (const [i, blocks] of thinking) {
      if (i < from || i >= step) continue;
      const dropped = blocks.filter((t) => i > from || t.block > block);
      if (!dropped.length) continue;
      for (const t of dropped) {
        chars -= t.chars;
        sizes[i] -= t.chars;
      }
      if (dropped.length === blocks.length) thinking.delete(i);
      else
        thinking.set(
          i,
          blocks.filter((t) => !dropped.includes(t)),
        );
    }
  };
  const thinkingOf = (i: number) => thinking.get(i)?.reduce((n, t) => n + t.chars, 0) ?? 0;
  // Each prompt's turn as its request counted it (the history up to that prompt), with the stubs before it.
  for (const step of prompts) {
    for (; counted <= step && counted < messages.length; counted++) {
      sizes[counted] = weights[counted];
      chars += sizes[counted];
    }
    for (const c of candidates) {
      if (chars <= o.budgetChars) break;
      if (c.index >= step || c.index < cut || stubs.get(c.index)?.has(c.block)) continue;
      const m = messages[c.index];
      const stub = oversizedStubText({
        conversationId: o.conversationId,
        messageId: m.id,
        seq: m.seq,
        role: m.role,
        block: c.block,
        text: (m.content[c.block] as { text: string }).text,
      });
      if (!stubs.has(c.index)) stubs.set(c.index, new Map());
      stubs.get(c.index)!.set(c.block, stub);
      chars -= c.size - stub.length;
      sizes[c.index] -= c.size - stub.length;
      savedChars += c.size - stub.length;
      stubbed++;
      dropThinking(c.index, c.block, step);
    }
    if (chars <= o.budgetChars) continue;
    // Every earlier text is a stub and the request still overflows: the oldest run goes as a pointer.
    const next = omittedCut({
      from: cut,
      step,
      chars,
      sizes,
      thinking: thinkingOf,
      cutAt,
      targetChars: Math.floor(o.budgetChars * OMITTED_KEEP_RATIO),
      budgetChars: o.budgetChars,
    });
    if (next === cut) continue;
    if (cut === 0) chars += OMITTED_POINTER_CHARS;
    for (let i = cut; i < next; i++) chars -= sizes[i] ?? 0;
    cut = next;
    dropThinking(cut, -1, step);
  }
  if (!stubs.size && cut === 0) return unchanged;
  const out = messages.map((m, i) => {
    const blocks = stubs.get(i);
    if (!blocks) return m;
    return {
      ...m,
      content: m.content.map((b, j): ContentBlock => (blocks.has(j) ? { type: "text", text: blocks.get(j)! } : b)),
    };
  });
  if (cut === 0) return { messages: out, stubbed, savedChars };
  return {
    messages: [
      ...omittedRun({
        conversationId: o.conversationId,
        run: messages.slice(0, cut),
        refused: new Set([...refused].map((i) => messages[i].seq)),
      }),
      ...out.slice(cut),
    ],
    stubbed,
    savedChars,
    omitted: cut,
  };
}
