// Regenerate: the last exchange (the last prompt and every message after it) is run again. The
// prompt is saved again as the new turn's user message and the earlier exchange is marked
// superseded in the head: its messages keep their bytes (R2, the index, search) and stay in the
// transcript with a marker, but no later model request, /replay or fold sees them. The notes its
// memory_save calls kept go with it, as a refused turn's do (forgetExchangeNotes).
import { notesSavedIn } from "../../agent/tools/memory-save";
import type { TurnEvent } from "../../core/events";
import { isAttachmentNote, isToolResultCarrier } from "../../core/render";
import { refusedTurns, startsTurn } from "../../core/replay-rules";
import { isAgentSegment, type NewMessage, type StoredMessage } from "../../core/types";
import { forgetNotes } from "../../services/memory/notes";
import type { ConversationHead, ConversationRef, SupersededRange } from "../../services/record/conversation-head";
import type { ConversationStore, UnmarkedCopy } from "./conversation-store";
import { moveCortexBookmark, type ObjectScope } from "./object-scope";

/** The refusals a regenerate can get (all 409: the conversation's state, not the request, is wrong). */
export const REGENERATE_BUSY = "turn_in_progress";
export const NOTHING_TO_REGENERATE = "nothing_to_regenerate";
export const REGENERATE_FOLDED = "regenerate_folded";

export interface RegenerateRefusal {
  status: 409;
  type: string;
  message: string;
}

export interface RegenerateTarget {
  kind: "target";
  /** The prompt run again: its content becomes the new turn's user message. */
  prompt: StoredMessage;
  /** The exchange that gets superseded: the prompt through the last message. */
  fromSeq: number;
  toSeq: number;
  /**
   * What of it is marked: the exchange without the notes of files uploaded during it (a turn paused
   * on client tools saves them after the step's results): they are not part of the exchange, so
   * they stay, as the notes after its reply do. One range when it holds none.
   */
  ranges: { fromSeq: number; toSeq: number }[];
}

/** Whether a message is covered by one of the head's superseded ranges. */
export function supersededBy(head: Pick<ConversationHead, "superseded">, seq: number): string | null {
  for (const r of head.superseded ?? []) if (seq >= r.fromSeq && seq <= r.toSeq) return r.by;
  return null;
}

/** The messages of these that the master's replay and its folds see: no sub-agent's, none superseded. */
export function masterMessages(
  messages: readonly StoredMessage[],
  head: Pick<ConversationHead, "superseded">,
): StoredMessage[] {
  return messages.filter((m) => !isAgentSegment(m) && !supersededBy(head, m.seq));
}

/**
 * Whether `replayed[i]` is a prompt as the replay tells one (core/replay-rules.ts startsTurn: a
 * message shaped like an attachment's note that the model answered was its turn's prompt, a real
 * upload's note is not), or a regenerate's copy (`copies`: a prompt by making, answered or not).
 * A message that answers tool calls and asks on (an imported one) opens no turn for the replay, but
 * its words are the last thing asked: it is found here, and refused, rather than an earlier prompt
 * being run again over both exchanges.
 */
const isPrompt = (replayed: readonly StoredMessage[], i: number, copies: (m: StoredMessage) => boolean) =>
  replayed[i].role === "user" &&
  !replayed[i].agent &&
  (startsTurn(replayed, i) || answersAndAsks(replayed[i]) || copies(replayed[i]));

/** Tool results, then words of its own. */
const answersAndAsks = (m: StoredMessage) => m.content.some((b) => b.type === "tool_result") && !isToolResultCarrier(m);

/** What regenerateTarget reads of the object's state, with the turns queued or running. */
export function regenerateState(
  store: Pick<ConversationStore, "lastSeq" | "getLease" | "unmarkedCopy" | "range">,
  turnsInFlight: number,
) {
  const lease = store.getLease();
  return {
    lastSeq: store.lastSeq(),
    turnsInFlight,
    foldInFlight: !!lease && lease.expiresAt > Date.now(),
    unmarkedCopy: store.unmarkedCopy(),
    stored: (fromSeq: number, toSeq: number) => store.range(fromSeq, toSeq),
  };
}

/**
 * Whether the verbatim tail opens on an attachment's note saved inside a turn: the master's message
 * stored before it (folded away, so not in the tail) is a user message, a step's results or another
 * note. startsTurn sees nothing before the tail's first message and would take such a note, when
 * the reply follows it, for the turn's prompt. A fold made before core/fold.ts kept its cuts off
 * these notes may have left a tail like that; the turn's prompt is then folded.
 */
function opensOnNoteInTurn(
  head: ConversationHead,
  first: StoredMessage,
  stored: (fromSeq: number, toSeq: number) => StoredMessage[],
): boolean {
  if ((head.summarizedThroughMessage ?? 0) === 0 || !isAttachmentNote(first)) return false;
  // Sub-agent and superseded messages are not in the master's replay, so they are skipped: the
  // messages before are read back a few at a time (the first one read nearly always decides).
  for (let to = first.seq - 1; to > 0; to -= 8) {
    const before = stored(Math.max(1, to - 7), to).filter((m) => !isAgentSegment(m) && !supersededBy(head, m.seq));
    if (before.length) return before[before.length - 1].role === "user";
  }
  return false;
}

/**
 * A view as its head marks it. Between a regenerate's saving its copy of the prompt and saving the
 * head that marks the replaced exchange (a turn runs, the copy is the last message), the view ends
 * before the copy: its lastSeq and its superseded agree, so an export bounded by it never carries
 * the copy after that exchange unmarked. A copy whose mark failed to save is the record as it
 * stands: no turn runs for it, and once a later turn saves anything after it the view is never cut.
 */
export function markedView<V extends { lastSeq: number; messageCount: number }>(
  view: V,
  state: { unmarkedCopy: UnmarkedCopy | null; turnsInFlight: number },
): V {
  const copy = state.unmarkedCopy;
  if (!copy || state.turnsInFlight === 0 || view.lastSeq !== copy.copySeq) return view;
  return { ...view, lastSeq: copy.copySeq - 1, messageCount: copy.copySeq - 1 };
}

/**
 * A transcript page, its replaced messages marked. It ends where markedView ends the view, so it
 * never carries the copy after the exchange it replaces unmarked (its next cursor stays null until
 * the mark lands).
 */
export function markedPage(
  store: Pick<ConversationStore, "lastSeq" | "unmarkedCopy" | "transcriptPage">,
  page: { head: Pick<ConversationHead, "superseded">; after: number; limit: number; turnsInFlight: number },
): TranscriptPage {
  const lastSeq = store.lastSeq();
  const state = { unmarkedCopy: store.unmarkedCopy(), turnsInFlight: page.turnsInFlight };
  const through = markedView({ lastSeq, messageCount: lastSeq }, state).lastSeq;
  const { messages, more } = store.transcriptPage(page.after, { limit: page.limit, through });
  return { messages: markReplaced(page.head, messages), next: more ? messages[messages.length - 1].seq : null };
}

/** The marks regenerates are saving, by object (its store): from the copy's save until the head write ends. */
const pendingMarks = new WeakMap<object, readonly SupersededRange[]>();

/**
 * The head as the mark being saved will leave it (the head itself when none is): the copy is saved,
 * so the next model request (the regenerate's) and /replay no longer carry the exchange it replaces.
 */
export function withPendingMark(head: ConversationHead, store: object): ConversationHead {
  const marks = pendingMarks.get(store);
  if (!marks?.length || (head.superseded ?? []).some((r) => r.by === marks[0].by)) return head;
  return withSuperseded(head, marks);
}

/**
 * The exchange a regenerate replaces, looked for in what the model sees (`replayed`: the verbatim
 * tail after the fold boundary, without superseded or sub-agent messages); a refusal otherwise.
 */
export function regenerateTarget(
  head: ConversationHead,
  replayed: readonly StoredMessage[],
  state: {
    lastSeq: number;
    turnsInFlight: number;
    foldInFlight: boolean;
    unmarkedCopy?: { copySeq: number; fromSeq: number } | null;
    /** The stored messages from one seq to another (the object's store), to judge the tail's first message. */
    stored?: (fromSeq: number, toSeq: number) => StoredMessage[];
  },
): RegenerateTarget | { kind: "refused"; refusal: RegenerateRefusal } {
  const refuse = (type: string, message: string) => ({
    kind: "refused" as const,
    refusal: { status: 409 as const, type, message },
  });
  if (state.turnsInFlight > 0)
    return refuse(
      REGENERATE_BUSY,
      "regenerate: a turn is running; wait for it to end (or stop it) and regenerate then",
    );
  const copies = (m: StoredMessage) =>
    (head.superseded ?? []).some((r) => r.by === m.id) || m.seq === state.unmarkedCopy?.copySeq;
  let i = replayed.length - 1;
  while (i >= 0 && !isPrompt(replayed, i, copies)) i--;
  if (i === 0 && state.stored && !copies(replayed[0]) && opensOnNoteInTurn(head, replayed[0], state.stored)) i = -1;
  const folded = (head.summarizedThroughMessage ?? 0) > 0;
  if (i < 0) {
    return folded
      ? refuse(
          REGENERATE_FOLDED,
          "regenerate: the last exchange is already folded into the summary; send the prompt again instead",
        )
      : refuse(NOTHING_TO_REGENERATE, "regenerate: there is no reply to replace yet");
  }
  // A last prompt that answers tool calls too (an imported one) cannot be saved again: its calls
  // would not be before the copy. An earlier prompt is not the last exchange, so none is run.
  if (replayed[i].content.some((b) => b.type === "tool_result"))
    return refuse(
      NOTHING_TO_REGENERATE,
      "regenerate: the last prompt carries tool results, so it cannot be run again; send a new prompt instead",
    );
  // A prompt with no reply yet is regenerated only when it is itself a regenerate's copy, stopped or
  // failed before the model answered: its exchange was already replaced, so it is tried again (the
  // replaced replies stay superseded, one version further back). Any other is sent again instead.
  const isCopy = (head.superseded ?? []).some((r) => r.by === replayed[i].id);
  let start = i;
  if (!isCopy && !replayed.slice(i + 1).some((m) => m.role === "assistant")) {
    // A regenerate whose mark could not be saved (its head write failed after the copy was) left
    // the copy unanswered after the exchange it replaces, recorded where it went: that exchange and
    // the copy are replaced. Any other unanswered prompt is sent again instead.
    const copy = state.unmarkedCopy;
    const j = copy && replayed[i].seq === copy.copySeq ? replayed.findIndex((m) => m.seq === copy.fromSeq) : -1;
    if (j < 0 || JSON.stringify(replayed[j].content) !== JSON.stringify(replayed[i].content))
      return refuse(
        NOTHING_TO_REGENERATE,
        "regenerate: the last prompt has no reply to replace; send it again instead",
      );
    start = j;
  }
  // A fold in flight may already be summarizing the exchange: what it wrote could not be taken back.
  if (state.foldInFlight)
    return refuse(
      REGENERATE_FOLDED,
      "regenerate: the conversation is being folded into its summary; try again in a moment",
    );
  // Notes of files uploaded after the reply are not part of the exchange: they stay, before the copy.
  let end = replayed.length;
  while (end > i + 1 && isAttachmentNote(replayed[end - 1])) end--;
  const toSeq = end < replayed.length ? replayed[end].seq - 1 : state.lastSeq;
  const fromSeq = replayed[start].seq;
  // The prompts themselves (one shaped like a note included) are part of it.
  const notes = replayed.slice(start, end).filter((m, k) => k > 0 && start + k !== i && isAttachmentNote(m));
  return { kind: "target", prompt: replayed[i], fromSeq, toSeq, ranges: rangesAround({ fromSeq, toSeq }, notes) };
}

/** `fromSeq`..`toSeq` without the messages `left` (in seq order): the runs between them. */
function rangesAround(
  range: { fromSeq: number; toSeq: number },
  left: readonly { seq: number }[],
): { fromSeq: number; toSeq: number }[] {
  const ranges: { fromSeq: number; toSeq: number }[] = [];
  let from = range.fromSeq;
  for (const { seq } of [...left, { seq: range.toSeq + 1 }]) {
    if (seq > from) ranges.push({ fromSeq: from, toSeq: Math.min(seq - 1, range.toSeq) });
    from = Math.max(from, seq + 1);
  }
  return ranges;
}

/** The head with a regenerate's superseded ranges added (one head write marks them all). */
export function withSuperseded(head: ConversationHead, ranges: readonly SupersededRange[]): ConversationHead {
  return { ...head, superseded: [...(head.superseded ?? []), ...ranges], updatedAt: new Date().toISOString() };
}

/** A transcript message: as stored, marked when a regenerate replaced its exchange. */
export type TranscriptMessage = StoredMessage & { superseded?: true; supersededBy?: string };
export interface TranscriptPage {
  messages: TranscriptMessage[];
  next: number | null;
}

/** Messages as the transcript shows them: each one a regenerate replaced marked, naming its replacement. */
export function markReplaced(
  head: Pick<ConversationHead, "superseded">,
  messages: readonly StoredMessage[],
): TranscriptMessage[] {
  return messages.map((m) => {
    const by = supersededBy(head, m.seq);
    return by ? { ...m, superseded: true as const, supersededBy: by } : m;
  });
}

type NoteScope = Pick<ObjectScope, "env" | "store" | "cortexBookmark">;

/**
 * Deletes the notes memory_save kept in an exchange no later request carries: a refused turn
 * (forgetRefusedNotes), or an exchange a regenerate replaced (`ranges`; `unedited`: a note edited
 * since it was saved is someone's now, and stays). A regenerate that saves it again then makes one
 * note, not a second. The deletes move the object's read bookmark, as a note tool's do: the turn's
 * next memory_search does not find a note just deleted.
 */
export async function forgetExchangeNotes(
  scope: NoteScope,
  ref: ConversationRef,
  exchange: { ranges: readonly { fromSeq: number; toSeq: number }[]; unedited: boolean },
): Promise<void> {
  const messages = exchange.ranges.flatMap((r) => (r.fromSeq > 0 ? scope.store.range(r.fromSeq, r.toSeq) : []));
  const ids = notesSavedIn(messages);
  if (ids.length) moveCortexBookmark(scope, await forgetNotes(scope.env, ref, { ids, unedited: exchange.unedited }));
}

/**
 * A turn that just ended (its first saved message `firstSeq` on): when /replay leaves it out whole
 * (core/replay-rules.ts refusedTurns between turns, as the fold and the index read it: no tool may
 * bring its words back), its notes go, whatever it ended with: a refusal whose fallback then failed
 * ends `error`, and is left out all the same. Told from the stored turn, so a turn with no refused
 * reply reads nothing (an index lookup). A note edited since it was saved stays, whoever edited it
 * (a person while the turn waited on client tools, or the turn itself with memory_update).
 */
export async function forgetRefusedNotes(scope: NoteScope, ref: ConversationRef, firstSeq: number): Promise<void> {
  const last = scope.store.lastSeq();
  if (firstSeq < 1 || !scope.store.refusalBetween(firstSeq, last)) return;
  const thread = scope.store.range(firstSeq, last).filter((m) => !isAgentSegment(m));
  const prompt = thread.findIndex((_, i) => startsTurn(thread, i));
  if (prompt < 0 || !refusedTurns(thread, true).has(prompt)) return;
  await forgetExchangeNotes(scope, ref, { ranges: [{ fromSeq: firstSeq, toSeq: last }], unedited: true });
}

/** What `exchange_superseded` tells: the exchange, the messages marked and the copy that replaced them. */
type Superseded = { fromSeq: number; toSeq: number; messageIds: string[]; supersededBy: string };

/**
 * supersedingPersist on the object's own record and store: once the replaced exchange is marked,
 * `exchange_superseded` is announced (for turn `turnId`) and its notes go (forgetExchangeNotes),
 * before the first model request is built.
 */
export function regeneratingPersist(
  persist: (messages: NewMessage[]) => Promise<StoredMessage[]>,
  on: {
    scope: NoteScope;
    /** The record's supersede (record.ts), typed here: record.ts imports this file through the replay cache. */
    record: { supersede(ranges: readonly SupersededRange[]): Promise<void> };
    ref: ConversationRef;
    target: Pick<RegenerateTarget, "fromSeq" | "toSeq" | "ranges">;
    turnId: string;
    announce: (event: TurnEvent) => void;
  },
): (messages: NewMessage[]) => Promise<StoredMessage[]> {
  const { scope, record, ref, target } = on;
  return supersedingPersist(persist, {
    range: target,
    supersede: async (marked) => {
      pendingMarks.set(scope.store, marked);
      try {
        await record.supersede(marked);
      } finally {
        pendingMarks.delete(scope.store);
      }
    },
    unmarked: (range) => scope.store.setUnmarkedCopy(range),
    idsOf: (from, to) => scope.store.range(from, to).map((m) => m.id),
    announce: (superseded) => {
      on.announce({ type: "exchange_superseded", turnId: on.turnId, ...superseded });
      return forgetExchangeNotes(scope, ref, { ranges: target.ranges, unedited: true });
    },
  });
}

/**
 * The regenerate's persist: its first save (the prompt's copy) marks the replaced exchange
 * superseded by the copy, before the first model request is built, and announces it: `fromSeq`..
 * `toSeq` the exchange, `messageIds` the messages marked (not the notes of files it kept).
 */
export function supersedingPersist(
  persist: (messages: NewMessage[]) => Promise<StoredMessage[]>,
  on: {
    range: Pick<RegenerateTarget, "fromSeq" | "toSeq" | "ranges">;
    supersede: (ranges: SupersededRange[]) => Promise<void>;
    /** Records (then clears) the copy whose mark is not saved yet: conversation-store setUnmarkedCopy. */
    unmarked: (range: { fromSeq: number; toSeq: number } | null) => void;
    idsOf: (fromSeq: number, toSeq: number) => string[];
    /** Awaited: what goes with the replaced exchange goes before the first model request. */
    announce: (e: Superseded) => void | Promise<void>;
  },
): (messages: NewMessage[]) => Promise<StoredMessage[]> {
  let marked = false;
  const { fromSeq, toSeq, ranges } = on.range;
  return async (messages) => {
    if (!marked) on.unmarked({ fromSeq, toSeq });
    const stored = await persist(messages);
    if (!marked && stored[0]) {
      marked = true;
      const by = stored[0].id;
      await on.supersede(ranges.map((r) => ({ ...r, by })));
      on.unmarked(null);
      const messageIds = ranges.flatMap((r) => on.idsOf(r.fromSeq, r.toSeq));
      await on.announce({ fromSeq, toSeq, messageIds, supersededBy: by });
    }
    return stored;
  };
}
