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

export class LiveTurn {
  private start: Extract<TurnEvent, { type: "turn_start" }> | null = null;
  private events: TurnEvent[] = [];

  /** Every turn event, as it is broadcast. */
  record(event: TurnEvent): void {
    if (event.type === "turn_start") {
      // An idempotent replay runs nothing: the turn running (if any) is still the one to show.
      if (event.replayed) return;
      this.start = event;
      this.events = [];
      return;
    }
    if (!this.start || !("turnId" in event) || event.turnId !== this.start.turnId) return;
    if (event.type === "turn_end") {
      this.start = null;
      this.events = [];
      return;
    }
    // A saved message holds everything streamed before it.
    if (event.type === "message") {
      this.events = [];
      return;
    }
    const last = this.events.at(-1);
    if (last && mergeable(last, event)) {
      this.events[this.events.length - 1] = { ...last, text: last.text + (event as Piece).text };
      return;
    }
    this.events.push(event);
    if (this.events.length > LIVE_MAX_EVENTS) this.events.shift();
  }

  /** The frames a resuming socket gets for the running turn (none when no turn runs): `turn_start` marked `resumed`, then the unsaved events. */
  frames(): TurnEvent[] {
    if (!this.start) return [];
    return [{ ...this.start, resumed: true }, ...this.events];
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
