// What a resuming socket (sockets.ts `resume`) has not seen. The saved part: the messages after its
// cursor (marked as the transcript marks them) and the regenerates it missed. The running turn as it
// is not saved yet: its `turn_start`, then its events since its last saved message. Together a
// socket that dropped mid-reply gets back the reply streamed so far, and learns which turn runs (so
// a client can offer Stop again), then the turns still queued behind it as their `turn_queued` (so
// it can stop one before it starts, by the id only that frame gave). The streamed text of one piece
// (a reply's text, one thinking block, of the master or of one sub-agent) is merged into few frames.
import type { TurnEvent } from "../../core/events";
import type { StoredMessage } from "../../core/types";
import type { ConversationHead, SupersededRange } from "../../services/record/conversation-head";
import type { ConversationStore } from "./conversation-store";
import { markReplaced } from "./regenerate";

/** A resuming socket gets at most this many messages; the rest is paged with GET /messages?after=. */
const RESUME_MAX_MESSAGES = 500;

/** Text merged into one replayed `delta` or `thinking` frame at most (a websocket frame stays small). */
export const LIVE_FRAME_CHARS = 32_000;
/** Events kept at most: past it the oldest unsaved ones are dropped (the saved messages still come). */
const LIVE_MAX_EVENTS = 1_000;

/** Turns started and not ended that are kept at most (a turn that threw past its guards never ends). */
const LIVE_MAX_TURNS = 4;
/** Queued turns' `turn_queued` kept at most (the oldest dropped past it). */
const QUEUED_MAX_TURNS = 100;

type TurnQueued = Extract<TurnEvent, { type: "turn_queued" }>;

interface Live {
  start: Extract<TurnEvent, { type: "turn_start" }>;
  events: TurnEvent[];
}

export class LiveTurn {
  /**
   * Turns started and not yet ended, oldest first. Turns run one at a time, but a turn stopped
   * while queued starts and ends at once while another runs: it must not take the running one's place.
   */
  private live: Live[] = [];
  /** Turns queued and not yet started (nor cancelled), in queue order: each one's `turn_queued`. */
  private queued: TurnQueued[] = [];

  /** Every turn event, as it is broadcast. */
  record(event: TurnEvent): void {
    if (event.type === "turn_queued") {
      this.queued = [...this.queued.filter((q) => q.turnId !== event.turnId), event];
      if (this.queued.length > QUEUED_MAX_TURNS) this.queued.shift();
      return;
    }
    // A queued turn is queued no longer once it starts (a cancelled one starts and ends at once).
    if ((event.type === "turn_start" && !event.replayed) || event.type === "turn_end")
      this.queued = this.queued.filter((q) => q.turnId !== event.turnId);
    if (event.type === "turn_start") {
      // An idempotent replay runs nothing: the turn running (if any) is still the one to show.
      if (event.replayed) return;
      this.live = [...this.live.filter((l) => l.start.turnId !== event.turnId), { start: event, events: [] }];
      if (this.live.length > LIVE_MAX_TURNS) this.live.shift();
      return;
    }
    if (!("turnId" in event)) return;
    const turn = this.live.find((l) => l.start.turnId === event.turnId);
    if (!turn) return;
    if (event.type === "turn_end") {
      this.live = this.live.filter((l) => l !== turn);
      return;
    }
    // A saved message holds everything streamed before it.
    if (event.type === "message") {
      turn.events = [];
      return;
    }
    // Not kept: the catch-up tells a regenerate from the head, to a socket whose cursor is before
    // the copy (savedSince). Announced after the copy's `message`, it would outlive that clearing
    // and reach a socket that saw it live, or one the catch-up had already told, again.
    if (event.type === "exchange_superseded") return;
    const last = turn.events.at(-1);
    if (last && mergeable(last, event)) {
      turn.events[turn.events.length - 1] = { ...last, text: last.text + (event as Piece).text };
      return;
    }
    turn.events.push(event);
    if (turn.events.length > LIVE_MAX_EVENTS) turn.events.shift();
  }

  /**
   * The frames a resuming socket gets for the running turn: its `turn_start` marked `resumed`, then
   * its unsaved events. `running`: whether a turn is in flight at all (one that threw past its
   * guards never sent its turn_end, and is no running turn).
   */
  frames(running: boolean): TurnEvent[] {
    const turn = running ? this.live.at(-1) : undefined;
    return turn ? [{ ...turn.start, resumed: true }, ...turn.events] : [];
  }

  /**
   * A resuming socket's frames after its saved part: the running turn's (`frames`), or, with none,
   * the paused turn's `requires_action`; then each turn still queued, its `turn_queued` marked
   * `resumed`, `ahead` as it stands now. `inFlight`: the turns queued or running (turn-order.ts).
   */
  catchUp(at: { inFlight: number; paused: TurnEvent | null }): TurnEvent[] {
    const { inFlight, paused } = at;
    const running = this.frames(inFlight > 0);
    const waiting = !running.length && paused ? [paused] : [];
    // In flight and not queued: running (or starting), so ahead of every queued turn.
    const before = Math.max(0, inFlight - this.queued.length);
    const queued = inFlight > 0 ? this.queued : [];
    return [
      ...running,
      ...waiting,
      ...queued.map((q, i): TurnEvent => ({ ...q, ahead: Math.min(q.ahead, Math.max(1, before + i)), resumed: true })),
    ];
  }
}

type Piece = Extract<TurnEvent, { type: "delta" | "thinking" }>;

function mergeable(last: TurnEvent, next: TurnEvent): last is Piece {
  if (last.type !== next.type || (last.type !== "delta" && last.type !== "thinking")) return false;
  const a = last as Piece;
  const b = next as Piece;
  if (a.agent?.segment !== b.agent?.segment) return false;
  if (a.type === "thinking" && b.type === "thinking" && (a.block !== b.block || a.redacted !== b.redacted))
    return false;
  return a.text.length + b.text.length <= LIVE_FRAME_CHARS;
}

/**
 * The saved part of a catch-up after `after`: a page of messages as GET …/messages pages it (count
 * and bytes: the object never holds more at once) as `message` frames, then an `exchange_superseded`
 * per regenerate the socket missed. `through`: the last seq sent (a cursor past the end is the end,
 * so later messages are not skipped as already sent); `more`: messages after the page remain.
 */
export function savedSince(
  store: Pick<ConversationStore, "transcriptPage" | "byId" | "range" | "lastSeq">,
  at: { head: ConversationHead | null | undefined; after: number },
): { frames: TurnEvent[]; through: number; more: boolean } {
  const { head, after } = at;
  const { messages: read, more } = store.transcriptPage(after, { limit: RESUME_MAX_MESSAGES });
  // Marked as the transcript marks them: a regenerate's replaced exchange says so.
  const page = head ? markReplaced(head, read) : read;
  const frames: TurnEvent[] = page.map((message) => ({ type: "message", turnId: "resume", message }));
  // The marks say which messages are replaced; a client that showed the exchange live hears it was
  // replaced as a connected socket heard it (the running turn's record keeps no such event).
  if (head) frames.push(...supersededSince(head, { after, page, more }, store));
  const through = page.length ? page[page.length - 1].seq : Math.min(after, store.lastSeq());
  return { frames, through, more };
}

/**
 * The `exchange_superseded` frames a socket resuming after `after` missed: one per regenerate whose
 * copy (the prompt saved again, which supersedes the exchange) has a seq past the cursor, as the
 * regenerate announced it, under the catch-up's turnId. `page`: the catch-up's messages (`more`:
 * messages after it remain), so the store is read only for what the page does not hold.
 */
function supersededSince(
  head: Pick<ConversationHead, "superseded">,
  caughtUp: { after: number; page: readonly StoredMessage[]; more: boolean },
  store: Pick<ConversationStore, "byId" | "range">,
): TurnEvent[] {
  const { after, page, more } = caughtUp;
  const byCopy = new Map<string, SupersededRange[]>();
  for (const range of head.superseded ?? []) byCopy.set(range.by, [...(byCopy.get(range.by) ?? []), range]);
  const idsOf = ({ fromSeq, toSeq }: SupersededRange) => {
    const inPage = page.filter((m) => m.seq >= fromSeq && m.seq <= toSeq);
    return (inPage.length === toSeq - fromSeq + 1 ? inPage : store.range(fromSeq, toSeq)).map((m) => m.id);
  };
  const events: TurnEvent[] = [];
  for (const [by, ranges] of byCopy) {
    const fromSeq = Math.min(...ranges.map((r) => r.fromSeq));
    const toSeq = Math.max(...ranges.map((r) => r.toSeq));
    // The copy is saved after the exchange it replaces: past the cursor when the exchange reaches
    // it, or when the page holds it; looked up only when neither tells and the page is not all.
    const missed = toSeq >= after || page.some((m) => m.id === by) || (more && (store.byId(by)?.seq ?? 0) > after);
    if (!missed) continue;
    const messageIds = ranges.flatMap(idsOf);
    events.push({ type: "exchange_superseded", turnId: "resume", fromSeq, toSeq, messageIds, supersededBy: by });
  }
  return events;
}
