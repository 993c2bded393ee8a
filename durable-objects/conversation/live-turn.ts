// The running turn as a resuming socket has not seen it saved: its `turn_start`, then its events
// since its last saved message. The saved messages reach a resuming socket from storage (sockets.ts
// `resume`), so together a socket that dropped mid-reply gets back the reply streamed so far, and
// learns which turn runs (so a client can offer Stop again). The streamed text of one piece (a
// reply's text, one thinking block, of the master or of one sub-agent) is merged into few frames.
import type { TurnEvent } from "../../core/events";

/** Text merged into one replayed `delta` or `thinking` frame at most (a websocket frame stays small). */
export const LIVE_FRAME_CHARS = 32_000;
/** Events kept at most: past it the oldest unsaved ones are dropped (the saved messages still come). */
const LIVE_MAX_EVENTS = 1_000;

/** Turns started and not ended that are kept at most (a turn that threw past its guards never ends). */
const LIVE_MAX_TURNS = 4;

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

  /** Every turn event, as it is broadcast. */
  record(event: TurnEvent): void {
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
